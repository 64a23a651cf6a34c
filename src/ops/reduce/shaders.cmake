# Shader variants of the reduce family, by accumulator type; ops and dtypes are specialization
# constants. Variants touching f64 tensors use the fp64 pointer types.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(kernel reduce scan)
  set(_src ${_dir}/${kernel}.comp)
  vkml_shader(NAME ${kernel}_f32 SOURCE ${_src} DEFINES ACC_F32 INCLUDE ${_dir})
  vkml_shader(NAME ${kernel}_f64 SOURCE ${_src} DEFINES ACC_F64 VKML_USE_FP64 INCLUDE ${_dir})
  vkml_shader(NAME ${kernel}_i64 SOURCE ${_src} DEFINES ACC_I64 INCLUDE ${_dir})
  vkml_shader(NAME ${kernel}_i64_fp64 SOURCE ${_src} DEFINES ACC_I64 VKML_USE_FP64 INCLUDE ${_dir})
endforeach()
