// CPU reference semantics of the elementwise table: what each row computes, written with the
// C++ standard library as PyTorch's CPU kernels do. The tests compare the shaders against it;
// host code may use it for scalar folding. Floats in T (float or double), integers in int64
// with wrap-around (the caller wraps to the dtype).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "vkml/elementwise.h"

namespace vkml::ops::reference {

template <typename T>
constexpr T nan() {
  return std::numeric_limits<T>::quiet_NaN();
}

// PyTorch's floor division of floats (div_floor_floating), in precision T.
template <typename T>
T py_div_floor(T a, T b) {
  if (b == 0) return a / b;
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
  if (div == 0) return std::copysign(T(0), a / b);
  T f = std::floor(div);
  if (div - f > T(0.5)) f += T(1);
  return f;
}

template <typename T>
T py_remainder(T a, T b) {
  T mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

// PyTorch's tanh-gelu gradient with 1 + tanh(u) = 2 sigmoid(2u), which does not cancel for x < 0.
template <typename T>
T gelu_tanh_backward(T g, T x) {
  const T beta = std::sqrt(T(2) / std::numbers::pi_v<T>), kappa = T(0.044715);
  T u = beta * (x + kappa * x * x * x);
  T s = T(1) / (T(1) + std::exp(T(-2) * u)), sm = T(1) / (T(1) + std::exp(T(2) * u));
  T right_d = T(0.5) * x * (T(4) * s * sm) * beta * (T(1) + T(3) * kappa * x * x);
  return g * (s + right_d);
}

// A float-computed binary row; comparisons and logical ops give 1 or 0.
template <typename T>
T binary_float(BinaryOp op, T a, T b, T alpha) {
  using B = BinaryOp;
  auto sigmoid = [](T v) { return T(1) / (T(1) + std::exp(-v)); };
  switch (op) {
    case B::kAdd: return a + alpha * b;
    case B::kSub: return a - alpha * b;
    case B::kMul: return a * b;
    case B::kDiv: return a / b;
    case B::kDivTrunc: return std::trunc(a / b);
    case B::kDivFloor: return py_div_floor(a, b);
    case B::kRemainder: return py_remainder(a, b);
    case B::kFmod: return std::fmod(a, b);
    case B::kPow: return std::pow(a, b);
    case B::kMaximum: return (std::isnan(a) || std::isnan(b)) ? nan<T>() : std::max(a, b);
    case B::kMinimum: return (std::isnan(a) || std::isnan(b)) ? nan<T>() : std::min(a, b);
    case B::kFmax: return std::fmax(a, b);
    case B::kFmin: return std::fmin(a, b);
    case B::kAtan2: return std::atan2(a, b);
    case B::kLogicalAnd: return a != 0 && b != 0;
    case B::kLogicalOr: return a != 0 || b != 0;
    case B::kLogicalXor: return (a != 0) != (b != 0);
    case B::kEq: return a == b;
    case B::kNe: return a != b;
    case B::kLt: return a < b;
    case B::kLe: return a <= b;
    case B::kGt: return a > b;
    case B::kGe: return a >= b;
    case B::kHypot: return std::hypot(a, b);
    case B::kCopysign: return std::copysign(a, b);
    case B::kXlogy: return std::isnan(b) ? nan<T>() : (a == 0 ? T(0) : a * std::log(b));
    case B::kRreluNoise: return a <= T(0) ? b : T(1);
    case B::kSigmoidBackward: return a * (T(1) - b) * b;
    case B::kTanhBackward: return a * (T(1) - b * b);
    case B::kThresholdBackward: return b <= alpha ? T(0) : a;
    case B::kSiluBackward: return a * sigmoid(b) * (T(1) + b * (T(1) - sigmoid(b)));
    case B::kGeluBackward:
      return a * (T(0.5) * std::erfc(-b / std::sqrt(T(2))) +
                  b * std::exp(T(-0.5) * b * b) / std::sqrt(T(2) * std::numbers::pi_v<T>));
    case B::kGeluTanhBackward: return gelu_tanh_backward(a, b);
    case B::kHardsigmoidBackward: return (b > T(-3) && b < T(3)) ? a / T(6) : T(0);
    case B::kHardswishBackward: return b < T(-3) ? T(0) : (b <= T(3) ? a * (b / T(3) + T(0.5)) : a);
    case B::kMishBackward: {
      T t = std::tanh(std::log1p(std::exp(b)));
      return a * (t + b * sigmoid(b) * (T(1) - t * t));
    }
    default: return nan<T>();  // no float kernel
  }
}

inline int64_t int_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  uint64_t r = 1, base = static_cast<uint64_t>(a);
  for (; b; b >>= 1, base *= base) {
    if (b & 1) r *= base;
  }
  return static_cast<int64_t>(r);
}

// Integer references in int64 with wrap-around (the caller wraps to the dtype).
// An integer-computed binary row for inputs of dtype t.
inline int64_t binary_int(BinaryOp op, DType t, int64_t a, int64_t b, int64_t alpha) {
  using B = BinaryOp;
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const int64_t bits = static_cast<int64_t>(dtype_size(t)) * 8;
  const bool is_signed = t != DType::kU8 && t != DType::kBool;
  switch (op) {
    case B::kAdd: return static_cast<int64_t>(u(a) + u(alpha) * u(b));
    case B::kSub: return static_cast<int64_t>(u(a) - u(alpha) * u(b));
    case B::kMul: return static_cast<int64_t>(u(a) * u(b));
    case B::kDivTrunc: return a / b;
    case B::kDivFloor: return a / b - ((a % b != 0 && (a % b < 0) != (b < 0)) ? 1 : 0);
    case B::kRemainder: return (a % b != 0 && (a % b < 0) != (b < 0)) ? a % b + b : a % b;
    case B::kFmod: return a % b;
    case B::kPow: return int_pow(a, b);
    case B::kMaximum: case B::kFmax: return std::max(a, b);
    case B::kMinimum: case B::kFmin: return std::min(a, b);
    case B::kBitwiseAnd: return a & b;
    case B::kBitwiseOr: return a | b;
    case B::kBitwiseXor: return a ^ b;
    case B::kLshift: return (b < 0 || b >= bits) ? 0 : static_cast<int64_t>(u(a) << b);
    case B::kRshift: {
      int64_t max_shift = bits - (is_signed ? 1 : 0);
      return (b < 0 || b >= max_shift) ? (max_shift >= 64 ? 0 : a >> max_shift) : a >> b;
    }
    case B::kThresholdBackward: return b <= alpha ? 0 : a;
    default:  // comparisons and logical ops
      return static_cast<int64_t>(binary_float<double>(op, a, b, alpha));
  }
}

// A float-computed unary row, in double.
inline double unary_float(UnaryOp op, double x) {
  using U = UnaryOp;
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  auto hard = [](double v) { return std::min(std::max(v + 3, 0.0), 6.0); };
  switch (op) {
    case U::kNeg: return -x;
    case U::kAbs: return std::abs(x);
    case U::kSign: return (x > 0) - (x < 0);
    case U::kReciprocal: return 1 / x;
    case U::kSqrt: return std::sqrt(x);
    case U::kRsqrt: return 1 / std::sqrt(x);
    case U::kExp: return std::exp(x);
    case U::kExp2: return std::exp2(x);
    case U::kExpm1: return std::expm1(x);
    case U::kLog: return std::log(x);
    case U::kLog2: return std::log2(x);
    case U::kLog10: return std::log10(x);
    case U::kLog1p: return std::log1p(x);
    case U::kSin: return std::sin(x);
    case U::kCos: return std::cos(x);
    case U::kTan: return std::tan(x);
    case U::kAsin: return std::asin(x);
    case U::kAcos: return std::acos(x);
    case U::kAtan: return std::atan(x);
    case U::kSinh: return std::sinh(x);
    case U::kCosh: return std::cosh(x);
    case U::kTanh: return std::tanh(x);
    case U::kAsinh: return std::asinh(x);
    case U::kAcosh: return std::acosh(x);
    case U::kAtanh: return std::atanh(x);
    case U::kErf: return std::erf(x);
    case U::kErfc: return std::erfc(x);
    case U::kFloor: return std::floor(x);
    case U::kCeil: return std::ceil(x);
    case U::kRound: return std::nearbyint(x);
    case U::kTrunc: return std::trunc(x);
    case U::kFrac: return x - std::trunc(x);
    case U::kSigmoid: return sigmoid(x);
    case U::kRelu: return x < 0 ? 0.0 : x;
    case U::kSilu: return x * sigmoid(x);
    case U::kGelu: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case U::kGeluTanh:  // 0.5 x (1 + tanh(u)) = x sigmoid(2u)
      return x * sigmoid(2 * std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x));
    case U::kLogicalNot: return x == 0;
    case U::kIsnan: return std::isnan(x);
    case U::kIsinf: return std::isinf(x);
    case U::kIsfinite: return std::isfinite(x);
    case U::kSquare: return x * x;
    case U::kHardsigmoid: return std::isnan(x) ? x : hard(x) / 6;
    case U::kHardswish: return std::isnan(x) ? x : x * hard(x) / 6;
    case U::kMish: return x * std::tanh(std::log1p(std::exp(x)));
    case U::kLogSigmoid: return std::min(x, 0.0) - std::log1p(std::exp(-std::abs(x)));
    default: return nan<double>();  // no float kernel
  }
}

// An integer-computed unary row for inputs of dtype t.
inline int64_t unary_int(UnaryOp op, DType t, int64_t x) {
  using U = UnaryOp;
  switch (op) {
    case U::kNeg: return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    case U::kAbs: return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
    case U::kSign: return (x > 0) - (x < 0);
    case U::kFloor: case U::kCeil: case U::kRound: case U::kTrunc: return x;
    case U::kRelu: return std::max<int64_t>(x, 0);
    case U::kLogicalNot: return x == 0;
    case U::kBitwiseNot: return t == DType::kBool ? !x : ~x;
    case U::kIsnan: case U::kIsinf: return 0;
    case U::kIsfinite: return 1;
    case U::kSquare: return static_cast<int64_t>(static_cast<uint64_t>(x) * x);
    default: return 0;  // no integer kernel
  }
}

}  // namespace vkml::ops::reference
