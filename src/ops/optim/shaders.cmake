# Shader variants of the fused optimizers: one per algorithm and parameter dtype.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(algo adam sgd adagrad)
  string(TOUPPER ${algo} A)
  foreach(dt f32 f16 bf16 f64)
    string(TOUPPER ${dt} D)
    set(_defs OPTIM_${A} DST_${D})
    if(dt STREQUAL f64)
      list(APPEND _defs VKML_USE_FP64)
    endif()
    vkml_shader(NAME fused_${algo}_${dt} SOURCE ${_dir}/fused_optim.comp DEFINES ${_defs}
                INCLUDE ${_dir})
  endforeach()
endforeach()
