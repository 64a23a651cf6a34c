# Shader variants of the amp family (GradScaler): unscale per floating dtype, scale update with
# and without fp64 arithmetic.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(dt f32 f16 bf16 f64)
  string(TOUPPER ${dt} D)
  set(_defs DST_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME amp_unscale_${dt} SOURCE ${_dir}/amp_unscale.comp DEFINES ${_defs} INCLUDE ${_dir})
endforeach()
vkml_shader(NAME amp_update_scale_f32 SOURCE ${_dir}/amp_update_scale.comp INCLUDE ${_dir})
vkml_shader(NAME amp_update_scale_f64 SOURCE ${_dir}/amp_update_scale.comp DEFINES VKML_USE_FP64
            INCLUDE ${_dir})
