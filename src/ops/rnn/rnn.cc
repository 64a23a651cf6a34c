// The rnn family's host side: shape checks, operand packing and one dispatch per cell call.
#include "vkml/rnn.h"

#include <string>

#include "ops/nn_util.h"
#include "ops/rnn/rnn_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

// One operand of a cell kernel: a matrix (rows, cols) or one row, or a bias vector shared by
// every row. Absent operands (a default TensorDesc) stay zero in the parameter block.
struct Operand {
  const TensorDesc* t;
  int64_t cols;       // expected feature count
  bool bias = false;  // a vector broadcast over rows
  bool optional = false;
};

class CellLaunch {
 public:
  CellLaunch(const char* op, int64_t batch, int64_t hidden) : op_(op) {
    p_.batch = batch;
    p_.hidden = hidden;
  }

  void add(int slot, const Operand& o, bool output) {
    const TensorDesc& t = *o.t;
    if (t.address == 0 && t.sizes.empty()) {  // absent (an empty tensor keeps its sizes)
      if (!o.optional) throw InvalidArgument(std::string("vkml: ") + op_ + ": missing operand");
      return;
    }
    const int64_t rows = o.bias ? 1 : p_.batch;
    bool shape_ok = false;
    if (t.ndim() == 1) {
      shape_ok = t.sizes[0] == o.cols && (o.bias || rows == 1);
      p_.row_stride[slot] = 0;
      p_.col_stride[slot] = t.strides[0];
    } else if (t.ndim() == 2 && !o.bias) {
      shape_ok = t.sizes[0] == rows && t.sizes[1] == o.cols;
      p_.row_stride[slot] = t.strides[0];
      p_.col_stride[slot] = t.strides[1];
    }
    if (!shape_ok) {
      throw InvalidArgument(std::string("vkml: ") + op_ + ": operand " + std::to_string(slot) +
                            " has shape " + t.describe() + ", expected " +
                            (o.bias ? "" : std::to_string(rows) + " x ") + std::to_string(o.cols));
    }
    p_.address[slot] = t.address;
    p_.dtype[slot] = nn::float_code(t, op_);
    fp64_ = fp64_ || t.dtype == DType::kF64;
    tensors_.push_back(&t);
    (output ? writes_ : reads_).push_back(nn::range_of(t));
  }

  void run(Device& dev, const std::string& kernel) {
    for (const TensorDesc* t : tensors_) nn::needs_fp64(dev, {t});  // throws if unsupported
    const int64_t n = p_.batch * p_.hidden;
    if (n == 0) return;
    nn::dispatch_groups(dev, nn::variant(dev, kernel, fp64_, false), kWorkgroup,
                        nn::groups_for(n, kWorkgroup), &p_, sizeof(p_), reads_, writes_);
  }

 private:
  const char* op_;
  RnnCellParams p_{};
  bool fp64_ = false;
  std::vector<const TensorDesc*> tensors_;
  std::vector<MemRange> reads_, writes_;
};

// Batch rows of a cell operand: dim 0 of a matrix, 1 for a single vector.
int64_t rows_of(const TensorDesc& t, const char* op) {
  if (t.ndim() == 2) return t.sizes[0];
  if (t.ndim() == 1) return 1;
  throw InvalidArgument(std::string("vkml: ") + op + ": expected a 1-D or 2-D tensor, got " +
                        t.describe());
}

int64_t features_of(const TensorDesc& t) { return t.sizes.empty() ? 0 : t.sizes.back(); }

}  // namespace

void lstm_cell(Device& dev, const TensorDesc& hy, const TensorDesc& cy, const TensorDesc& workspace,
               const TensorDesc& igates, const TensorDesc& hgates, const TensorDesc& cx,
               const TensorDesc& b_ih, const TensorDesc& b_hh) {
  const char* op = "lstm_cell";
  const int64_t batch = rows_of(cx, op), hidden = features_of(cx), g = 4 * hidden;
  CellLaunch l(op, batch, hidden);
  l.add(0, {&igates, g}, false);
  l.add(1, {&hgates, g}, false);
  l.add(2, {&cx, hidden}, false);
  l.add(3, {&b_ih, g, true, true}, false);
  l.add(4, {&b_hh, g, true, true}, false);
  l.add(5, {&hy, hidden}, true);
  l.add(6, {&cy, hidden}, true);
  l.add(7, {&workspace, g}, true);
  l.run(dev, "rnn_lstm_fwd");
}

void lstm_cell_backward(Device& dev, const TensorDesc& grad_gates, const TensorDesc& grad_cx,
                        const TensorDesc& grad_hy, const TensorDesc& grad_cy, const TensorDesc& cx,
                        const TensorDesc& cy, const TensorDesc& workspace) {
  const char* op = "lstm_cell_backward";
  const int64_t batch = rows_of(cx, op), hidden = features_of(cx), g = 4 * hidden;
  CellLaunch l(op, batch, hidden);
  l.add(0, {&grad_hy, hidden, false, true}, false);
  l.add(1, {&grad_cy, hidden, false, true}, false);
  l.add(2, {&cx, hidden}, false);
  l.add(3, {&cy, hidden}, false);
  l.add(4, {&workspace, g}, false);
  l.add(5, {&grad_gates, g}, true);
  l.add(6, {&grad_cx, hidden}, true);
  l.run(dev, "rnn_lstm_bwd");
}

void gru_cell(Device& dev, const TensorDesc& hy, const TensorDesc& workspace,
              const TensorDesc& igates, const TensorDesc& hgates, const TensorDesc& hx,
              const TensorDesc& b_ih, const TensorDesc& b_hh) {
  const char* op = "gru_cell";
  const int64_t batch = rows_of(hx, op), hidden = features_of(hx), g = 3 * hidden;
  CellLaunch l(op, batch, hidden);
  l.add(0, {&igates, g}, false);
  l.add(1, {&hgates, g}, false);
  l.add(2, {&hx, hidden}, false);
  l.add(3, {&b_ih, g, true, true}, false);
  l.add(4, {&b_hh, g, true, true}, false);
  l.add(5, {&hy, hidden}, true);
  l.add(6, {&workspace, 5 * hidden}, true);
  l.run(dev, "rnn_gru_fwd");
}

void gru_cell_backward(Device& dev, const TensorDesc& grad_igates, const TensorDesc& grad_hgates,
                       const TensorDesc& grad_hx, const TensorDesc& grad_hy,
                       const TensorDesc& workspace) {
  const char* op = "gru_cell_backward";
  const int64_t batch = rows_of(grad_hy, op), hidden = features_of(grad_hy), g = 3 * hidden;
  CellLaunch l(op, batch, hidden);
  l.add(0, {&grad_hy, hidden}, false);
  l.add(1, {&workspace, 5 * hidden}, false);
  l.add(2, {&grad_igates, g}, true);
  l.add(3, {&grad_hgates, g}, true);
  l.add(4, {&grad_hx, hidden}, true);
  l.run(dev, "rnn_gru_bwd");
}

}  // namespace vkml::ops
