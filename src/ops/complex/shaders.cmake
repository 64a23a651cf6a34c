# Shader variants of the complex elementwise family: complex64 (float math, no Float64
# capability) and complex128 (double math).
set(_dir ${CMAKE_CURRENT_LIST_DIR})
vkml_shader(NAME complex_math SOURCE ${_dir}/complex_math.comp DEFINES DT_F32
            INCLUDE ${_dir} ${CMAKE_SOURCE_DIR}/src/ops/elementwise)
vkml_shader(NAME complex_math_f64 SOURCE ${_dir}/complex_math.comp DEFINES DT_F64 EW_DOUBLE
            VKML_USE_FP64 INCLUDE ${_dir} ${CMAKE_SOURCE_DIR}/src/ops/elementwise)
