# Shader variants of the loss family: pointwise forward/backward, nll forward/backward and the
# final reduction; each in float and double, reducing kernels also with subgroup reductions (_sg).
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  foreach(sg "" _sg)
    set(_sg)
    if(sg STREQUAL _sg)
      set(_sg VKML_NN_SUBGROUP)
    endif()
    vkml_shader(NAME loss_pointwise_fwd${fp}${sg} SOURCE ${_dir}/loss_pointwise.comp
                DEFINES LOSS_FORWARD ${_fp} ${_sg} INCLUDE ${_dir})
    vkml_shader(NAME nll_fwd${fp}${sg} SOURCE ${_dir}/nll.comp
                DEFINES NLL_FORWARD ${_fp} ${_sg} INCLUDE ${_dir})
    vkml_shader(NAME loss_finish${fp}${sg} SOURCE ${_dir}/loss_finish.comp
                DEFINES ${_fp} ${_sg} INCLUDE ${_dir})
  endforeach()
  vkml_shader(NAME loss_pointwise_bwd${fp} SOURCE ${_dir}/loss_pointwise.comp
              DEFINES ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME nll_bwd${fp} SOURCE ${_dir}/nll.comp DEFINES ${_fp} INCLUDE ${_dir})
endforeach()

# CTC loss: forward (alpha), backward (beta, then the gradient), float and double.
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  vkml_shader(NAME ctc_fwd${fp} SOURCE ${_dir}/ctc.comp DEFINES CTC_FORWARD ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME ctc_beta${fp} SOURCE ${_dir}/ctc.comp DEFINES CTC_BETA ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME ctc_grad${fp} SOURCE ${_dir}/ctc.comp DEFINES CTC_GRAD ${_fp} INCLUDE ${_dir})
endforeach()

# multi_margin_loss / multilabel_margin_loss: forward (with the workgroup sum) and backward.
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  foreach(sg "" _sg)
    set(_sg)
    if(sg STREQUAL _sg)
      set(_sg VKML_NN_SUBGROUP)
    endif()
    vkml_shader(NAME margin_fwd${fp}${sg} SOURCE ${_dir}/margin.comp
                DEFINES MARGIN_FORWARD ${_fp} ${_sg} INCLUDE ${_dir})
  endforeach()
  vkml_shader(NAME margin_bwd${fp} SOURCE ${_dir}/margin.comp DEFINES ${_fp} INCLUDE ${_dir})
endforeach()
