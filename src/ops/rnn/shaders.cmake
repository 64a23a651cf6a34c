# Shader variants of the rnn family: LSTM and GRU cell pointwise kernels, forward and backward,
# in float (f32/f16/bf16 operands) and double. exp and tanh come from the elementwise family.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(kernel lstm_fwd lstm_bwd gru_fwd gru_bwd)
  string(TOUPPER ${kernel} K)
  vkml_shader(NAME rnn_${kernel} SOURCE ${_dir}/rnn_cell.comp DEFINES RNN_${K}
              INCLUDE ${_dir} ${CMAKE_SOURCE_DIR}/src/ops/elementwise)
  vkml_shader(NAME rnn_${kernel}_f64 SOURCE ${_dir}/rnn_cell.comp DEFINES RNN_${K} VKML_USE_FP64
              INCLUDE ${_dir} ${CMAKE_SOURCE_DIR}/src/ops/elementwise)
endforeach()
