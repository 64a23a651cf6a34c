# Shader variants of the resample family: upsampling/padding, im2col/col2im and grid sampling,
# forward and backward, in float and double; max_unpool's two passes.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  vkml_shader(NAME resample_fwd${fp} SOURCE ${_dir}/resample.comp DEFINES ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME resample_bwd${fp} SOURCE ${_dir}/resample.comp DEFINES RESAMPLE_BACKWARD ${_fp}
              INCLUDE ${_dir})
  vkml_shader(NAME im2col${fp} SOURCE ${_dir}/unfold.comp DEFINES ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME col2im${fp} SOURCE ${_dir}/unfold.comp DEFINES COL2IM ${_fp} INCLUDE ${_dir})
endforeach()
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  vkml_shader(NAME grid_sample_fwd${fp} SOURCE ${_dir}/grid_sample.comp DEFINES ${_fp}
              INCLUDE ${_dir})
  vkml_shader(NAME grid_sample_bwd${fp} SOURCE ${_dir}/grid_sample.comp
              DEFINES GRID_BACKWARD ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME grid_sample_gather${fp} SOURCE ${_dir}/grid_sample.comp
              DEFINES GRID_GATHER ${_fp} INCLUDE ${_dir})
endforeach()
vkml_shader(NAME unpool_winners SOURCE ${_dir}/unpool.comp DEFINES UNPOOL_WINNERS INCLUDE ${_dir})
vkml_shader(NAME unpool_write SOURCE ${_dir}/unpool.comp INCLUDE ${_dir})
