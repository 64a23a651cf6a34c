# Shader variants of the embedding family: embedding_dense_backward per float dtype (its element
# types come from the index family's index_types.glsl) and embedding_bag in float and double.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(dt f32 f16 bf16 f64)
  string(TOUPPER ${dt} D)
  set(_defs DST_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME embedding_bwd_${dt} SOURCE ${_dir}/embedding_bwd.comp DEFINES ${_defs}
              INCLUDE ${_dir} ${_dir}/../index)
endforeach()
foreach(fp "" _f64)
  set(_fp)
  if(fp STREQUAL _f64)
    set(_fp VKML_USE_FP64)
  endif()
  vkml_shader(NAME embedding_bag${fp} SOURCE ${_dir}/embedding_bag.comp DEFINES ${_fp}
              INCLUDE ${_dir})
endforeach()
