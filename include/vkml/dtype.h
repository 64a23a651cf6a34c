// Element types understood by the runtime and the ops layer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vkml {

// kC64 / kC128: interleaved (real, imaginary) pairs of f32 / f64; one element is one pair.
enum class DType : uint8_t {
  kF32, kF16, kBF16, kF64, kI8, kU8, kI16, kI32, kI64, kBool, kC64, kC128, kCount
};

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: return 2;
    case DType::kF64: case DType::kI64: case DType::kC64: return 8;
    case DType::kC128: return 16;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
    default: return 0;
  }
}

constexpr bool dtype_is_float(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}

constexpr bool dtype_is_complex(DType t) { return t == DType::kC64 || t == DType::kC128; }

// Short names are also the suffixes of shader variants ("copy_cast_f32_i64").
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF64: return "f64";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI16: return "i16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
    case DType::kC64: return "c64";
    case DType::kC128: return "c128";
    default: return "?";
  }
}

}  // namespace vkml
