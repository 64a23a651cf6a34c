# Shader variants of the pool family: forward and backward (gather), in float and double.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  vkml_shader(NAME pool_fwd${fp} SOURCE ${_dir}/pool.comp DEFINES ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME pool_bwd${fp} SOURCE ${_dir}/pool.comp DEFINES POOL_BACKWARD ${_fp}
              INCLUDE ${_dir})
endforeach()
vkml_shader(NAME pool_fwd32 SOURCE ${_dir}/pool.comp DEFINES POOL_OFFSETS32 INCLUDE ${_dir})
vkml_shader(NAME pool_bwd32 SOURCE ${_dir}/pool.comp DEFINES POOL_BACKWARD POOL_OFFSETS32
            INCLUDE ${_dir})
# Integer max pools (and the int64 average) run in int64, one variant per dtype.
foreach(dt i8 u8 i16 i32 i64)
  string(TOUPPER ${dt} D)
  vkml_shader(NAME pool_fwd_${dt} SOURCE ${_dir}/pool.comp DEFINES POOL_INT_${D} INCLUDE ${_dir})
endforeach()
