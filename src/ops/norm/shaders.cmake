# Shader variants of the norm family: forward, backward (grad_input and per-row parameter
# grads), parameter grads reduced over rows; each in float and double, with shared-memory or
# subgroup (_sg) reductions.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(kernel norm_fwd norm_bwd norm_param_grad)
  foreach(fp "" _f64)
    set(_fp)
    if(fp STREQUAL _f64)
      set(_fp VKML_USE_FP64)
    endif()
    vkml_shader(NAME ${kernel}${fp} SOURCE ${_dir}/${kernel}.comp DEFINES ${_fp} INCLUDE ${_dir})
    vkml_shader(NAME ${kernel}${fp}_sg SOURCE ${_dir}/${kernel}.comp
                DEFINES ${_fp} VKML_NN_SUBGROUP INCLUDE ${_dir})
  endforeach()
endforeach()
