# Shader variants of the linalg family (LU, triangular solves, Cholesky, det, Householder QR):
# float and double.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
vkml_shader(NAME linalg SOURCE ${_dir}/linalg.comp INCLUDE ${_dir})
vkml_shader(NAME linalg_f64 SOURCE ${_dir}/linalg.comp DEFINES VKML_USE_FP64 INCLUDE ${_dir})
vkml_shader(NAME linalg_jacobi SOURCE ${_dir}/linalg_jacobi.comp INCLUDE ${_dir})
vkml_shader(NAME linalg_jacobi_f64 SOURCE ${_dir}/linalg_jacobi.comp DEFINES VKML_USE_FP64
            INCLUDE ${_dir})
