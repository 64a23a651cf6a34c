// The fused recurrent cells on vkml: _thnn_fused_lstm_cell / _thnn_fused_gru_cell and their
// backward. PyTorch's composite LSTM/GRU cells (at::lstm_cell, at::gru_cell and the layers of
// nn.LSTM / nn.GRU) call these for PrivateUse1 tensors, as they do for CUDA: the two gate GEMMs
// run as linear, then one dispatch does the activations and state update. Outputs and
// workspaces are laid out as CUDA's (so the workspace dtype follows input_gates / hx).
#include <ATen/ops/empty.h>
#include <ATen/ops/sum.h>
#include <torch/library.h>

#include "common/nn_bridge.h"
#include "vkml/rnn.h"

namespace torch_vkml::ops_fused_rnn_cells {

using OptTensor = std::optional<at::Tensor>;

// The checks of CUDA's fused cells: same device, floating, 2-D gates of gates * H features for
// the batch of the (B, H) state, biases of gates * H.
void check_cell(const char* op, const at::Tensor& igates, const at::Tensor& hgates,
                const at::Tensor& state, const at::Tensor& b_ih, const at::Tensor& b_hh,
                int64_t gates) {
  for (const at::Tensor* t : {&hgates, &state, &b_ih, &b_hh}) {
    nn::check_on_device(igates, *t, op, "every argument");
  }
  nn::check_floating(igates, op);
  TORCH_CHECK(state.dim() == 2, op, ": expected a 2-D state, got ", state.dim(), " dims");
  TORCH_CHECK(igates.sizes() == hgates.sizes(), op, ": input_gates ", igates.sizes(),
              " and hidden_gates ", hgates.sizes(), " differ");
  TORCH_CHECK(igates.dim() == 2 && igates.size(0) == state.size(0) &&
                  igates.size(1) == gates * state.size(1),
              op, ": expected gates of shape [", state.size(0), ", ", gates * state.size(1),
              "], got ", igates.sizes());
  TORCH_CHECK(b_ih.defined() == b_hh.defined(), op, ": both biases or neither");
  for (const at::Tensor* b : {&b_ih, &b_hh}) {
    TORCH_CHECK(!b->defined() || (b->dim() == 1 && b->size(0) == igates.size(1)), op,
                ": expected a bias of ", igates.size(1), " elements, got ", b->sizes());
  }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const at::Tensor& igates,
                                                               const at::Tensor& hgates,
                                                               const at::Tensor& cx,
                                                               const OptTensor& input_bias,
                                                               const OptTensor& hidden_bias) {
  const at::Tensor& b_ih = nn::value_or_undefined(input_bias);
  const at::Tensor& b_hh = nn::value_or_undefined(hidden_bias);
  check_cell("_thnn_fused_lstm_cell", igates, hgates, cx, b_ih, b_hh, 4);
  at::Tensor workspace = at::empty(igates.sizes(), igates.options());
  at::Tensor hy = at::empty(cx.sizes(), cx.options());
  at::Tensor cy = at::empty(cx.sizes(), cx.options());
  nn::run_on(igates, [&](vkml::Device& dev) {
    vkml::ops::lstm_cell(dev, to_desc(hy), to_desc(cy), to_desc(workspace), to_desc(igates),
                         to_desc(hgates), to_desc(cx), nn::desc_or_empty(b_ih),
                         nn::desc_or_empty(b_hh));
  });
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(
    const OptTensor& grad_hy_opt, const OptTensor& grad_cy_opt, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const at::Tensor& grad_hy = nn::value_or_undefined(grad_hy_opt);
  const at::Tensor& grad_cy = nn::value_or_undefined(grad_cy_opt);
  if (!grad_hy.defined() && !grad_cy.defined()) return {};
  const char* op = "_thnn_fused_lstm_cell_backward";
  for (const at::Tensor* t : {&grad_hy, &grad_cy, &cy, &workspace}) {
    nn::check_on_device(cx, *t, op, "every argument");
  }
  nn::check_floating(workspace, op);
  TORCH_CHECK(cx.dim() == 2 && cy.sizes() == cx.sizes() &&
                  (!grad_hy.defined() || grad_hy.sizes() == cx.sizes()) &&
                  (!grad_cy.defined() || grad_cy.sizes() == cx.sizes()) &&
                  workspace.dim() == 2 && workspace.size(0) == cx.size(0) &&
                  workspace.size(1) == 4 * cx.size(1),
              op, ": inconsistent shapes: cx ", cx.sizes(), ", cy ", cy.sizes(), ", workspace ",
              workspace.sizes());
  at::Tensor grad_gates = at::empty(workspace.sizes(), workspace.options());
  at::Tensor grad_cx = at::empty(cx.sizes(), cx.options());
  nn::run_on(cx, [&](vkml::Device& dev) {
    vkml::ops::lstm_cell_backward(dev, to_desc(grad_gates), to_desc(grad_cx),
                                  nn::desc_or_empty(grad_hy), nn::desc_or_empty(grad_cy),
                                  to_desc(cx), to_desc(cy), to_desc(workspace));
  });
  at::Tensor grad_bias = has_bias ? at::sum(grad_gates, 0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> fused_gru_cell(const at::Tensor& igates,
                                                  const at::Tensor& hgates, const at::Tensor& hx,
                                                  const OptTensor& input_bias,
                                                  const OptTensor& hidden_bias) {
  const at::Tensor& b_ih = nn::value_or_undefined(input_bias);
  const at::Tensor& b_hh = nn::value_or_undefined(hidden_bias);
  check_cell("_thnn_fused_gru_cell", igates, hgates, hx, b_ih, b_hh, 3);
  at::Tensor workspace = at::empty({hx.size(0), 5 * hx.size(1)}, hx.options());
  at::Tensor hy = at::empty(hx.sizes(), hx.options());
  nn::run_on(igates, [&](vkml::Device& dev) {
    vkml::ops::gru_cell(dev, to_desc(hy), to_desc(workspace), to_desc(igates), to_desc(hgates),
                        to_desc(hx), nn::desc_or_empty(b_ih), nn::desc_or_empty(b_hh));
  });
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  const char* op = "_thnn_fused_gru_cell_backward";
  nn::check_on_device(grad_hy, workspace, op, "workspace");
  nn::check_floating(grad_hy, op);
  TORCH_CHECK(grad_hy.dim() == 2 && workspace.dim() == 2 &&
                  workspace.size(0) == grad_hy.size(0) && workspace.size(1) == 5 * grad_hy.size(1),
              op, ": inconsistent shapes: grad_hy ", grad_hy.sizes(), ", workspace ",
              workspace.sizes());
  const int64_t batch = grad_hy.size(0), hidden = grad_hy.size(1);
  at::Tensor grad_igates = at::empty({batch, 3 * hidden}, workspace.options());
  at::Tensor grad_hgates = at::empty({batch, 3 * hidden}, workspace.options());
  at::Tensor grad_hx = at::empty({batch, hidden}, workspace.options());
  nn::run_on(grad_hy, [&](vkml::Device& dev) {
    vkml::ops::gru_cell_backward(dev, to_desc(grad_igates), to_desc(grad_hgates),
                                 to_desc(grad_hx), to_desc(grad_hy), to_desc(workspace));
  });
  at::Tensor grad_b_ih = has_bias ? at::sum(grad_igates, 0) : at::Tensor();
  at::Tensor grad_b_hh = has_bias ? at::sum(grad_hgates, 0) : at::Tensor();
  return {grad_igates, grad_hgates, grad_hx, grad_b_ih, grad_b_hh};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", fused_lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", fused_lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", fused_gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", fused_gru_cell_backward);
}

}  // namespace torch_vkml::ops_fused_rnn_cells
