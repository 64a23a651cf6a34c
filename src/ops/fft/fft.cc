// The fft family: complex DFTs along the last dimension (see include/vkml/fft.h).
#include "vkml/fft.h"

#include <cmath>
#include <complex>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "ops/fft/fft_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"
#include "vkml/ops.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;
constexpr int kRadices[] = {8, 4, 2, 3, 5, 7, 11, 13};

// The radices of the Stockham passes for n, or empty where a prime factor above 13 remains.
std::vector<int> factor(int64_t n) {
  std::vector<int> f;
  for (int r : kRadices) {
    while (n % r == 0 && n > 1) {
      f.push_back(r);
      n /= r;
    }
  }
  if (n != 1) f.clear();
  return f;
}

// A batch of rows: element (b, j) at b * row + j * elem (complex elements).
struct Rows {
  uint64_t address = 0;
  int64_t row = 0;
  int64_t elem = 1;
};

// `t` as rows over its last dimension, when its other dimensions merge into one batch stride.
bool as_rows(const TensorDesc& t, Rows& r) {
  const int nd = t.ndim();
  r.address = t.address;
  r.elem = nd ? t.strides[nd - 1] : 1;
  r.row = nd ? t.sizes[nd - 1] * r.elem : 1;
  int64_t expect = -1;  // the stride the next outer batch dim must have
  bool first = true;
  for (int d = nd - 2; d >= 0; --d) {
    if (t.sizes[d] == 1) continue;
    if (first) {
      r.row = t.strides[d];
      first = false;
    } else if (t.strides[d] != expect) {
      return false;
    }
    expect = t.strides[d] * t.sizes[d];
  }
  return true;
}

// A complex tensor as its float pairs (sizes + [2]), for the copy family.
TensorDesc float_pairs(const TensorDesc& t) {
  TensorDesc f = t;
  f.dtype = t.dtype == DType::kC128 ? DType::kF64 : DType::kF32;
  for (auto& s : f.strides) s *= 2;
  f.sizes.push_back(2);
  f.strides.push_back(1);
  return f;
}

TensorDesc contiguous_like(const TensorDesc& t, uint64_t address) {
  TensorDesc c;
  c.address = address;
  c.dtype = t.dtype;
  c.sizes = t.sizes;
  c.strides.assign(t.sizes.size(), 1);
  for (int d = static_cast<int>(t.sizes.size()) - 2; d >= 0; --d) {
    c.strides[d] = c.strides[d + 1] * t.sizes[d + 1];
  }
  return c;
}

// Tables in device memory, computed once per (device, length, dtype, kind) in double.
enum class Table { kTwiddle, kChirp, kChirpSpectrum };

std::vector<std::complex<double>> host_fft(std::vector<std::complex<double>> a) {
  const size_t n = a.size();  // a power of two
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    for (size_t i = 0; i < n; i += len) {
      for (size_t k = 0; k < len / 2; ++k) {
        const double ang = -2.0 * M_PI * static_cast<double>(k) / static_cast<double>(len);
        std::complex<double> w(std::cos(ang), std::sin(ang));
        std::complex<double> u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
    }
  }
  return a;
}

// exp(-pi i j^2 / n), with j^2 reduced modulo 2n exactly.
std::complex<double> chirp(int64_t j, int64_t n) {
  const int64_t t = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) % (2 * n));
  const double ang = -M_PI * static_cast<double>(t) / static_cast<double>(n);
  return {std::cos(ang), std::sin(ang)};
}

std::vector<std::complex<double>> table_values(Table kind, int64_t n, int64_t m) {
  std::vector<std::complex<double>> v;
  if (kind == Table::kTwiddle) {
    v.resize(n);
    for (int64_t t = 0; t < n; ++t) {
      const double ang = -2.0 * M_PI * static_cast<double>(t) / static_cast<double>(n);
      v[t] = {std::cos(ang), std::sin(ang)};
    }
  } else if (kind == Table::kChirp) {
    v.resize(n);
    for (int64_t j = 0; j < n; ++j) v[j] = chirp(j, n);
  } else {
    std::vector<std::complex<double>> b(m);
    for (int64_t j = 0; j < n; ++j) {
      b[j] = std::conj(chirp(j, n));
      if (j > 0) b[m - j] = b[j];
    }
    v = host_fft(std::move(b));
  }
  return v;
}

uint64_t table(Device& dev, Table kind, int64_t n, int64_t m, bool fp64) {
  static std::mutex mu;
  // Tables live as long as the process: a few per transform length, reused by every call.
  static std::map<std::tuple<const Device*, int, int64_t, bool>, uint64_t> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_tuple(&dev, static_cast<int>(kind), n, fp64);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::vector<std::complex<double>> v = table_values(kind, n, m);
  uint64_t addr = 0;
  if (fp64) {
    addr = dev.allocate(v.size() * 16);
    dev.stream().upload(v.data(), addr, v.size() * 16);
  } else {
    std::vector<float> f(2 * v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      f[2 * i] = static_cast<float>(v[i].real());
      f[2 * i + 1] = static_cast<float>(v[i].imag());
    }
    addr = dev.allocate(f.size() * 4);
    dev.stream().upload(f.data(), addr, f.size() * 4);
  }
  cache.emplace(key, addr);
  return addr;
}

struct Job {
  Device& dev;
  bool fp64;
  int64_t batch;
  uint64_t csize;
};

// Records one dispatch; `table_bytes` and `table2_bytes` are the tables' sizes (0: unused).
void record(const Job& job, FftParams& p, uint64_t read_bytes, uint64_t write_bytes,
            uint64_t table_bytes, uint64_t table2_bytes = 0) {
  if (p.numel == 0) return;
  MemRange reads[] = {{p.src, read_bytes}, {p.table, table_bytes}, {p.table2, table2_bytes}};
  MemRange writes[] = {{p.dst, write_bytes}};
  nn::dispatch_groups(job.dev, nn::variant(job.dev, "fft", job.fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

// Bytes from the first to one past the last element of `batch` rows of n.
uint64_t span(const Rows& r, int64_t batch, int64_t n, uint64_t csize) {
  return static_cast<uint64_t>((batch - 1) * r.row + (n - 1) * r.elem + 1) * csize;
}

// Stockham passes of a smooth length n from `src` to `dst`, through two scratch row sets.
void stockham(const Job& job, const Rows& src, const Rows& dst, int64_t n, bool inverse,
              double scale) {
  std::vector<int> radices = factor(n);
  if (radices.empty()) radices.push_back(1);  // n == 1: one scaled copy
  const size_t passes = radices.size();
  const uint64_t bytes = static_cast<uint64_t>(job.batch * n) * job.csize;
  nn::Scratch s0(job.dev, passes > 1 ? bytes : 0), s1(job.dev, passes > 2 ? bytes : 0);
  const uint64_t tw = table(job.dev, Table::kTwiddle, n, 0, job.fp64);
  Rows in = src;
  int64_t span_l = 1;
  for (size_t s = 0; s < passes; ++s) {
    const bool last = s + 1 == passes;
    Rows out = last ? dst : Rows{s % 2 == 0 ? s0.address() : s1.address(), n, 1};
    FftParams p{};
    p.src = in.address;
    p.dst = out.address;
    p.table = tw;
    p.batch = job.batch;
    p.n = n;
    p.src_row = in.row;
    p.src_elem = in.elem;
    p.dst_row = out.row;
    p.dst_elem = out.elem;
    p.span = span_l;
    p.radix = static_cast<uint32_t>(radices[s]);
    p.numel = job.batch * (n / radices[s]);
    p.mode = FFT_PASS;
    p.conj_table = inverse ? 1u : 0u;
    p.scale_d = last ? scale : 1.0;
    p.scale = static_cast<float>(p.scale_d);
    record(job, p, span(in, job.batch, n, job.csize), span(out, job.batch, n, job.csize),
           static_cast<uint64_t>(n) * job.csize);
    in = out;
    span_l *= radices[s];
  }
}

// Bluestein: X = w * (IFFT_m(FFT_m(x w, padded) * FFT_m(conj w, wrapped))), m a power of two.
void bluestein(const Job& job, const Rows& src, const Rows& dst, int64_t n, bool inverse,
               double scale) {
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  const uint64_t bytes = static_cast<uint64_t>(job.batch * m) * job.csize;
  nn::Scratch a(job.dev, bytes), b(job.dev, bytes);
  const Rows ra{a.address(), m, 1}, rb{b.address(), m, 1};
  const uint64_t w = table(job.dev, Table::kChirp, n, 0, job.fp64);
  const uint64_t spectrum = table(job.dev, Table::kChirpSpectrum, n, m, job.fp64);
  const uint32_t conj = inverse ? 1u : 0u;
  auto pointwise = [&](uint32_t mode, const Rows& from, const Rows& to, int64_t len,
                       int64_t width, double s) {
    FftParams p{};
    p.src = from.address;
    p.dst = to.address;
    p.table = spectrum;
    p.table2 = w;
    p.batch = job.batch;
    p.n = len;
    p.m = width;
    p.src_row = from.row;
    p.src_elem = from.elem;
    p.dst_row = to.row;
    p.dst_elem = to.elem;
    p.numel = job.batch * width;
    p.mode = mode;
    p.conj_table = conj;
    p.scale_d = s;
    p.scale = static_cast<float>(s);
    record(job, p, span(from, job.batch, len, job.csize), span(to, job.batch, width, job.csize),
           static_cast<uint64_t>(m) * job.csize, static_cast<uint64_t>(n) * job.csize);
  };
  pointwise(FFT_CHIRP_IN, src, ra, n, m, 1.0);
  stockham(job, ra, rb, m, false, 1.0);
  pointwise(FFT_MUL, rb, rb, m, m, 1.0);
  stockham(job, rb, ra, m, true, 1.0 / static_cast<double>(m));
  pointwise(FFT_CHIRP_OUT, ra, dst, n, n, scale);
}

}  // namespace

bool fft_is_smooth(int64_t n) { return n <= 1 || !factor(n).empty(); }

void fft_c2c(Device& dev, const TensorDesc& out, const TensorDesc& in, bool inverse,
             double scale) {
  if (!dtype_is_complex(in.dtype) || in.dtype != out.dtype) {
    throw InvalidArgument("vkml: fft: expected complex input and output of one dtype, got " +
                          in.describe() + " and " + out.describe());
  }
  nn::check_same_sizes(out, in, "fft");
  if (in.ndim() == 0) throw InvalidArgument("vkml: fft: the input has no dimension");
  const bool fp64 = in.dtype == DType::kC128;
  if (!dev.caps().supports_dtype(in.dtype)) {
    throw NotSupported("vkml: " + dev.caps().name + " does not support complex128 tensors");
  }
  if (in.numel() == 0) return;
  const int64_t n = in.sizes.back();
  Job job{dev, fp64, in.numel() / n, dtype_size(in.dtype)};
  // Operands whose batch dimensions do not merge into one stride go through dense copies.
  Rows src, dst;
  nn::Scratch packed_in(dev, as_rows(in, src) ? 0 : in.numel() * job.csize);
  if (packed_in.address()) {
    TensorDesc c = contiguous_like(in, packed_in.address());
    copy(dev, float_pairs(c), float_pairs(in));
    as_rows(c, src);
  }
  const bool direct_out = as_rows(out, dst);
  nn::Scratch packed_out(dev, direct_out ? 0 : out.numel() * job.csize);
  TensorDesc co;
  if (!direct_out) {
    co = contiguous_like(out, packed_out.address());
    as_rows(co, dst);
  }
  if (fft_is_smooth(n)) {
    stockham(job, src, dst, n, inverse, scale);
  } else {
    bluestein(job, src, dst, n, inverse, scale);
  }
  if (!direct_out) copy(dev, float_pairs(out), float_pairs(co));
}

}  // namespace vkml::ops
