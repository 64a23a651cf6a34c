# Shader variants of the norm family: forward, backward (grad_input and per-row parameter
# grads), parameter grads reduced over rows; each in float and double, with shared-memory or
# subgroup (_sg) reductions.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(kernel norm_fwd norm_bwd norm_param_grad)
  foreach(fp "" _f64)
    set(_fp)
    if(fp STREQUAL _f64)
      set(_fp VKML_USE_FP64)
    endif()
    vkml_shader(NAME ${kernel}${fp} SOURCE ${_dir}/${kernel}.comp DEFINES ${_fp} INCLUDE ${_dir})
    vkml_shader(NAME ${kernel}${fp}_sg SOURCE ${_dir}/${kernel}.comp
                DEFINES ${_fp} VKML_NN_SUBGROUP INCLUDE ${_dir})
  endforeach()
endforeach()
# The split path (few long rows): partial/combine stages and the elementwise apply.
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  foreach(stage fwd_partial bwd_partial)
    string(TOUPPER ${stage} S)
    vkml_shader(NAME norm_split_${stage}${fp} SOURCE ${_dir}/norm_split.comp
                DEFINES SPLIT_${S} ${_fp} INCLUDE ${_dir})
    vkml_shader(NAME norm_split_${stage}${fp}_sg SOURCE ${_dir}/norm_split.comp
                DEFINES SPLIT_${S} ${_fp} VKML_NN_SUBGROUP INCLUDE ${_dir})
  endforeach()
  vkml_shader(NAME norm_split_fwd_combine${fp} SOURCE ${_dir}/norm_split.comp
              DEFINES SPLIT_FWD_COMBINE ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME norm_split_bwd_combine${fp} SOURCE ${_dir}/norm_split.comp
              DEFINES SPLIT_BWD_COMBINE ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME norm_split_fwd_apply${fp} SOURCE ${_dir}/norm_split.comp
              DEFINES SPLIT_APPLY ${_fp} INCLUDE ${_dir})
  vkml_shader(NAME norm_split_bwd_apply${fp} SOURCE ${_dir}/norm_split.comp
              DEFINES SPLIT_APPLY SPLIT_BACKWARD ${_fp} INCLUDE ${_dir})
endforeach()
# The batch-norm fast path over dense NCHW / channels_last layouts (norm_bn.comp), fp32 math.
vkml_shader(NAME norm_bn_partial SOURCE ${_dir}/norm_bn.comp DEFINES BN_PARTIAL INCLUDE ${_dir})
vkml_shader(NAME norm_bn_partial_sg SOURCE ${_dir}/norm_bn.comp
            DEFINES BN_PARTIAL VKML_NN_SUBGROUP INCLUDE ${_dir})
vkml_shader(NAME norm_bn_combine SOURCE ${_dir}/norm_bn.comp DEFINES BN_COMBINE INCLUDE ${_dir})
vkml_shader(NAME norm_bn_apply SOURCE ${_dir}/norm_bn.comp DEFINES BN_APPLY INCLUDE ${_dir})
# The row-norm fast path (layer / RMS norm over contiguous rows, norm_rows.comp), fp32 math.
foreach(stage fwd bwd)
  string(TOUPPER ${stage} S)
  vkml_shader(NAME norm_rows_${stage} SOURCE ${_dir}/norm_rows.comp DEFINES ROWS_${S}
              INCLUDE ${_dir})
  vkml_shader(NAME norm_rows_${stage}_sg SOURCE ${_dir}/norm_rows.comp
              DEFINES ROWS_${S} VKML_NN_SUBGROUP INCLUDE ${_dir})
endforeach()
vkml_shader(NAME norm_rows_pg_partial SOURCE ${_dir}/norm_rows.comp DEFINES ROWS_PG_PARTIAL
            INCLUDE ${_dir})
vkml_shader(NAME norm_rows_pg_combine SOURCE ${_dir}/norm_rows.comp DEFINES ROWS_PG_COMBINE
            INCLUDE ${_dir})
