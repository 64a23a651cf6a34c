# Shader variants of the dropout family: the forward step after the Bernoulli draw and the
# backward, in float and double.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  vkml_shader(NAME dropout_fwd${fp} SOURCE ${_dir}/dropout.comp DEFINES DROPOUT_FORWARD ${_fp}
              INCLUDE ${_dir})
  vkml_shader(NAME dropout_bwd${fp} SOURCE ${_dir}/dropout.comp DEFINES ${_fp} INCLUDE ${_dir})
endforeach()
