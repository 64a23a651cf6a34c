# Shader variants of the conv family (see cmake/Shaders.cmake).
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(bits 16 32 64)
  vkml_shader(NAME conv_im2col_u${bits} SOURCE ${_dir}/conv_im2col.comp
              DEFINES ELEM_BITS=${bits} INCLUDE ${_dir})
  vkml_shader(NAME conv_im2col_rows_u${bits} SOURCE ${_dir}/conv_im2col_rows.comp
              DEFINES ELEM_BITS=${bits} INCLUDE ${_dir})
endforeach()
foreach(dt f32 f16 bf16 f64)
  string(TOUPPER ${dt} D)
  set(_defs DT_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  # col2im reads the fp32 (f64) GEMM output and stores the tensor's dtype.
  vkml_shader(NAME conv_col2im_${dt} SOURCE ${_dir}/conv_col2im.comp
              DEFINES ${_defs} INCLUDE ${_dir})
  vkml_shader(NAME conv_bias_grad_${dt} SOURCE ${_dir}/conv_bias_grad.comp
              DEFINES ${_defs} INCLUDE ${_dir})
  foreach(pass forward backward_data backward_weight)
    string(TOUPPER ${pass} PASS)
    vkml_shader(NAME conv_dw_${pass}_${dt} SOURCE ${_dir}/conv_depthwise.comp
                DEFINES ${_defs} DW_${PASS} INCLUDE ${_dir})
  endforeach()
endforeach()
# Implicit-GEMM convolution: the SIMT GEMM kernel with conv_igemm.glsl's gather and store, for
# the forward-style passes and (CONV_WGRAD) the weight gradient, A and B both gathered, the GEMM's
# epilogue and split-K. Half inputs are widened on load; accumulation is fp32.
foreach(dt f32 f16 bf16)
  string(TOUPPER ${dt} D)
  vkml_shader(NAME conv_igemm_${dt} SOURCE ${_dir}/../gemm/gemm_simt.comp
              DEFINES IN_${D} OUT_${D} CONV_IMPLICIT INCLUDE ${_dir} ${_dir}/../gemm)
  vkml_shader(NAME conv_igemm_wgrad_${dt} SOURCE ${_dir}/../gemm/gemm_simt.comp
              DEFINES IN_${D} OUT_${D} CONV_WGRAD INCLUDE ${_dir} ${_dir}/../gemm)
endforeach()
# The same passes on cooperative matrices (conv_igemm_coopmat.comp) for fp16 and bf16; skipped
# where glslang lacks cooperative matrices or bfloat16.
foreach(dt f16 bf16)
  string(TOUPPER ${dt} D)
  set(_req coopmat)
  if(dt STREQUAL bf16)
    list(APPEND _req bf16)
  endif()
  vkml_shader(NAME conv_igemmc_${dt} SOURCE ${_dir}/conv_igemm_coopmat.comp
              DEFINES IN_${D} OUT_${D} CONV_IMPLICIT INCLUDE ${_dir} ${_dir}/../gemm
              REQUIRES ${_req})
  vkml_shader(NAME conv_igemmc_wgrad_${dt} SOURCE ${_dir}/conv_igemm_coopmat.comp
              DEFINES IN_${D} OUT_${D} CONV_WGRAD INCLUDE ${_dir} ${_dir}/../gemm
              REQUIRES ${_req})
endforeach()
# Winograd F(m x m, 3x3) transforms (conv_winograd.cc), m = 2 and 4: input, weight and output
# stages, and the weight gradient's output-gradient (dy) and result (wgrad) stages; the tensors
# f32/f16/bf16, the transformed buffers fp32.
foreach(dt f32 f16 bf16)
  string(TOUPPER ${dt} D)
  foreach(m 2 4)
    foreach(stage input weight output dy wgrad)
      string(TOUPPER ${stage} S)
      vkml_shader(NAME conv_wino${m}_${stage}_${dt} SOURCE ${_dir}/conv_winograd.comp
                  DEFINES DT_${D} WINO_${S} WINO_M=${m} INCLUDE ${_dir})
    endforeach()
  endforeach()
endforeach()
