# Shader variants of the softmax family: forward/backward x workgroup-per-row/thread-per-row,
# each in float (f32/f16/bf16 data) and double (f64 data); row variants also with subgroup
# reductions (_sg), chosen when the device has subgroup arithmetic.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(dir fwd bwd)
  set(_base)
  if(dir STREQUAL bwd)
    set(_base SOFTMAX_BACKWARD)
  endif()
  foreach(fp "" _f64)
    set(_fp)
    if(fp STREQUAL _f64)
      set(_fp VKML_USE_FP64)
    endif()
    vkml_shader(NAME softmax_${dir}_thread${fp} SOURCE ${_dir}/softmax.comp
                DEFINES ${_base} ${_fp} SOFTMAX_THREAD INCLUDE ${_dir})
    vkml_shader(NAME softmax_${dir}_row${fp} SOURCE ${_dir}/softmax.comp
                DEFINES ${_base} ${_fp} INCLUDE ${_dir})
    vkml_shader(NAME softmax_${dir}_row${fp}_sg SOURCE ${_dir}/softmax.comp
                DEFINES ${_base} ${_fp} VKML_NN_SUBGROUP INCLUDE ${_dir})
  endforeach()
endforeach()
