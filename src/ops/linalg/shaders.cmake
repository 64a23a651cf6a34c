# Shader variants of the linalg family (LU, triangular solves, Cholesky, det, Householder QR;
# Jacobi eigen/SVD): float and double, complex64 (float math, no Float64 capability) and
# complex128.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(src linalg linalg_jacobi)
  vkml_shader(NAME ${src} SOURCE ${_dir}/${src}.comp INCLUDE ${_dir})
  vkml_shader(NAME ${src}_f64 SOURCE ${_dir}/${src}.comp DEFINES VKML_USE_FP64 INCLUDE ${_dir})
  vkml_shader(NAME ${src}_complex SOURCE ${_dir}/${src}.comp DEFINES LINALG_COMPLEX
              INCLUDE ${_dir})
  vkml_shader(NAME ${src}_complex_f64 SOURCE ${_dir}/${src}.comp
              DEFINES LINALG_COMPLEX VKML_USE_FP64 INCLUDE ${_dir})
endforeach()
