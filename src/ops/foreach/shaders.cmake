# Shader variants of the multi-tensor (_foreach_*) ops: one per dtype of the tensors.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(dt f32 f16 bf16 f64)
  string(TOUPPER ${dt} D)
  set(_defs DST_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME foreach_${dt} SOURCE ${_dir}/foreach.comp DEFINES ${_defs} INCLUDE ${_dir})
  vkml_shader(NAME foreach_norm_partial_${dt} SOURCE ${_dir}/foreach_norm.comp
              DEFINES ${_defs} NORM_PARTIAL INCLUDE ${_dir})
  vkml_shader(NAME foreach_norm_finish_${dt} SOURCE ${_dir}/foreach_norm.comp
              DEFINES ${_defs} NORM_FINISH INCLUDE ${_dir})
endforeach()
