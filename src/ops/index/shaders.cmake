# Shader variants of the index family: the gather/scatter kernel per dtype, where/masked_fill by
# element size, and the three mask-scan passes (by mask element size).
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(dt f32 f16 bf16 f64 i8 u8 i16 i32 i64 bool c64)
  string(TOUPPER ${dt} D)
  set(_defs DST_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME index_${dt} SOURCE ${_dir}/index.comp DEFINES ${_defs} INCLUDE ${_dir})
endforeach()
set(_scan ${_dir}/mask_scan.comp)
foreach(bits 8 16 32 64)
  vkml_shader(NAME select_u${bits} SOURCE ${_dir}/select.comp DEFINES ELEM_BITS=${bits}
              INCLUDE ${_dir})
  vkml_shader(NAME mask_scan_count_m${bits} SOURCE ${_scan} DEFINES SCAN_PASS=0 MASK_BITS=${bits}
              INCLUDE ${_dir})
  vkml_shader(NAME mask_scan_write_m${bits} SOURCE ${_scan} DEFINES SCAN_PASS=2 MASK_BITS=${bits}
              INCLUDE ${_dir})
endforeach()
vkml_shader(NAME mask_scan_blocks SOURCE ${_scan} DEFINES SCAN_PASS=1 MASK_BITS=8 INCLUDE ${_dir})
