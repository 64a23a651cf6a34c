# Shader variants of the attention family: the fused forward, the three backward kernels
# (dq; dk and dv per key block) and the backward's rowsum(dout * o). f32/f16/bf16 data, float math.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(mode fwd dq dk dv)
  string(TOUPPER ${mode} M)
  vkml_shader(NAME attention_${mode} SOURCE ${_dir}/attention.comp DEFINES ATTN_${M}
              INCLUDE ${_dir})
endforeach()
vkml_shader(NAME attention_delta SOURCE ${_dir}/attention_delta.comp INCLUDE ${_dir})
# Cooperative-matrix forward for fp16 / bf16: skipped where glslang lacks
# GL_KHR_cooperative_matrix or GL_EXT_bfloat16; the portable kernel then runs.
vkml_shader(NAME attention_coopmat_f16 SOURCE ${_dir}/attention_coopmat.comp DEFINES IN_F16
            INCLUDE ${_dir} REQUIRES coopmat)
vkml_shader(NAME attention_coopmat_bf16 SOURCE ${_dir}/attention_coopmat.comp DEFINES IN_BF16
            INCLUDE ${_dir} REQUIRES coopmat bf16)
# Single-pass cooperative-matrix forward (VKML_ATTENTION=flash), see attention_flash.cc.
vkml_shader(NAME attention_flash_f16 SOURCE ${_dir}/attention_flash.comp DEFINES IN_F16
            INCLUDE ${_dir} REQUIRES coopmat)
vkml_shader(NAME attention_flash_bf16 SOURCE ${_dir}/attention_flash.comp DEFINES IN_BF16
            INCLUDE ${_dir} REQUIRES coopmat bf16)
foreach(mode dq dk dv)
  string(TOUPPER ${mode} M)
  vkml_shader(NAME attention_flash_${mode}_f16 SOURCE ${_dir}/attention_flash_bwd.comp
              DEFINES IN_F16 FLASH_${M} INCLUDE ${_dir} REQUIRES coopmat)
  vkml_shader(NAME attention_flash_${mode}_bf16 SOURCE ${_dir}/attention_flash_bwd.comp
              DEFINES IN_BF16 FLASH_${M} INCLUDE ${_dir} REQUIRES coopmat bf16)
endforeach()
# Row-wise kernels of the GEMM path (scores -> probabilities; dS), see attention_gemm.cc.
vkml_shader(NAME attention_rows_fwd SOURCE ${_dir}/attention_rows.comp DEFINES ROWS_FWD
            INCLUDE ${_dir})
vkml_shader(NAME attention_rows_bwd SOURCE ${_dir}/attention_rows.comp DEFINES ROWS_BWD
            INCLUDE ${_dir})
# Split-KV decode (few queries, many keys): per-split partial softmax and output, then the merge.
vkml_shader(NAME attention_decode_split_sg SOURCE ${_dir}/attention_decode.comp DEFINES DECODE_SPLIT
            INCLUDE ${_dir})
vkml_shader(NAME attention_decode_reduce SOURCE ${_dir}/attention_decode.comp DEFINES DECODE_REDUCE
            INCLUDE ${_dir})
