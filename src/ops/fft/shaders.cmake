# Shader variants of the fft family: complex64 and complex128.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
vkml_shader(NAME fft SOURCE ${_dir}/fft.comp INCLUDE ${_dir})
vkml_shader(NAME fft_f64 SOURCE ${_dir}/fft.comp DEFINES VKML_USE_FP64 INCLUDE ${_dir})
