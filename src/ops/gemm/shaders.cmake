# Shader variants of the gemm family (see cmake/Shaders.cmake). Names: gemm_<kernel>_<in>_<out>.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
# (input dtype, output dtype): same dtype, plus fp32 outputs of half inputs (accumulating buffers).
set(_gemm_pairs f32:f32 f16:f16 f16:f32 bf16:bf16 bf16:f32 f64:f64)
foreach(pair IN LISTS _gemm_pairs)
  string(REPLACE ":" ";" _p ${pair})
  list(GET _p 0 in)
  list(GET _p 1 out)
  string(TOUPPER ${in} I)
  string(TOUPPER ${out} O)
  set(_defs IN_${I} OUT_${O})
  if(in STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  foreach(kernel tiled gemv)
    vkml_shader(NAME gemm_${kernel}_${in}_${out} SOURCE ${_dir}/gemm_${kernel}.comp
                DEFINES ${_defs} INCLUDE ${_dir})
  endforeach()
endforeach()
vkml_shader(NAME gemm_tiledv_f32_f32 SOURCE ${_dir}/gemm_tiled_vec.comp DEFINES IN_F32 OUT_F32
            INCLUDE ${_dir})
# The SIMT kernel with named accumulator blocks (thread tiles of 4 or 8).
vkml_shader(NAME gemm_simtn_f32_f32 SOURCE ${_dir}/gemm_simt.comp DEFINES IN_F32 OUT_F32
            INCLUDE ${_dir})
# Split-K reduction per output dtype (the input-dtype define only picks the accumulator).
foreach(pair f32:f32 f32:f16 f32:bf16 f64:f64)
  string(REPLACE ":" ";" _p ${pair})
  list(GET _p 0 in)
  list(GET _p 1 out)
  string(TOUPPER ${in} I)
  string(TOUPPER ${out} O)
  set(_defs IN_${I} OUT_${O})
  if(in STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME gemm_splitk_reduce_${out} SOURCE ${_dir}/gemm_splitk_reduce.comp
              DEFINES ${_defs} INCLUDE ${_dir})
endforeach()
# Cooperative-matrix variants: skipped where glslang lacks GL_KHR_cooperative_matrix (Debian 12)
# or GL_EXT_bfloat16; the chooser then falls back to the tiled kernel.
foreach(out f16 f32)
  string(TOUPPER ${out} O)
  vkml_shader(NAME gemm_coopmat_f16_${out} SOURCE ${_dir}/gemm_coopmat.comp
              DEFINES IN_F16 OUT_${O} INCLUDE ${_dir} REQUIRES coopmat)
  vkml_shader(NAME gemm_coopmatv_f16_${out} SOURCE ${_dir}/gemm_coopmat_vec.comp
              DEFINES IN_F16 OUT_${O} INCLUDE ${_dir} REQUIRES coopmat)
endforeach()
foreach(out bf16 f32)
  string(TOUPPER ${out} O)
  vkml_shader(NAME gemm_coopmat_bf16_${out} SOURCE ${_dir}/gemm_coopmat.comp
              DEFINES IN_BF16 OUT_${O} INCLUDE ${_dir} REQUIRES coopmat bf16)
  vkml_shader(NAME gemm_coopmatv_bf16_${out} SOURCE ${_dir}/gemm_coopmat_vec.comp
              DEFINES IN_BF16 OUT_${O} INCLUDE ${_dir} REQUIRES coopmat bf16)
endforeach()
# fp32 products on fp16 tensor cores (gemm_f32_split.cc): the split and the final scaling.
vkml_shader(NAME gemm_split_f16 SOURCE ${_dir}/gemm_split_f16.comp INCLUDE ${_dir})
vkml_shader(NAME gemm_split_scale SOURCE ${_dir}/gemm_split_scale.comp INCLUDE ${_dir})
