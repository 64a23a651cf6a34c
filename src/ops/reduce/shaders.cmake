# Shader variants of the reduce family, by accumulator type; ops and dtypes are specialization
# constants. Variants touching f64 tensors use the fp64 pointer types.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(kernel reduce cumulative)  # reduce.comp: reductions; cumulative.comp: scans
  set(_src ${_dir}/${kernel}.comp)
  vkml_shader(NAME ${kernel}_f32 SOURCE ${_src} DEFINES ACC_F32 INCLUDE ${_dir})
  vkml_shader(NAME ${kernel}_f64 SOURCE ${_src} DEFINES ACC_F64 VKML_USE_FP64 INCLUDE ${_dir})
  vkml_shader(NAME ${kernel}_i64 SOURCE ${_src} DEFINES ACC_I64 INCLUDE ${_dir})
  vkml_shader(NAME ${kernel}_i64_fp64 SOURCE ${_src} DEFINES ACC_I64 VKML_USE_FP64 INCLUDE ${_dir})
endforeach()
# The column layout's first pass (REDUCE_COLUMNS=<adjacent outputs per thread>): its own variants,
# so that its unrolled named states do not weigh on the other reductions' pipelines.
set(_src ${_dir}/reduce.comp)
foreach(w 2 4 8)
  set(_c REDUCE_COLUMNS=${w})
  vkml_shader(NAME reduce_col${w}_f32 SOURCE ${_src} DEFINES ACC_F32 ${_c} INCLUDE ${_dir})
  vkml_shader(NAME reduce_col${w}_f64 SOURCE ${_src} DEFINES ACC_F64 VKML_USE_FP64 ${_c}
              INCLUDE ${_dir})
  vkml_shader(NAME reduce_col${w}_i64 SOURCE ${_src} DEFINES ACC_I64 ${_c} INCLUDE ${_dir})
  vkml_shader(NAME reduce_col${w}_i64_fp64 SOURCE ${_src} DEFINES ACC_I64 VKML_USE_FP64 ${_c}
              INCLUDE ${_dir})
endforeach()
