// Runtime micro-benchmarks: device copy bandwidth (vkCmdCopyBuffer and a vec4 shader) and the
// cost of a dispatch, on the GPU (timestamps) and on the host (recording). Medians of repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "vkml/ops.h"
#include "vkml/runtime.h"

using namespace vkml;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  Device& dev = device(0);
  Stream& s = dev.stream();
  std::printf("device: %s (driver %s)\n", dev.caps().name.c_str(), format_driver_version(dev.caps()).c_str());
  bool ts = dev.caps().timestamps;
  uint64_t bytes = quick ? (64ull << 20) : (1ull << 30);
  int reps = quick ? 5 : 20;
  uint64_t a = dev.allocate(bytes), b = dev.allocate(bytes);
  ops::fill(dev, TensorDesc{a, DType::kI32, {int64_t(bytes / 4)}, {1}}, Scalar::from_int(7));
  dev.synchronize();

  auto time_gpu = [&](auto&& record) {
    std::vector<double> t;
    for (int i = 0; i < reps + 2; ++i) {
      double ns;
      if (ts) {
        uint32_t q0 = s.write_timestamp();
        record();
        uint32_t q1 = s.write_timestamp();
        ns = s.read_timestamp_ns(q1) - s.read_timestamp_ns(q0);
      } else {
        auto t0 = std::chrono::steady_clock::now();
        record();
        dev.synchronize();
        ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      }
      if (i >= 2) t.push_back(ns);  // first two are warm-up
    }
    return median(t);
  };

  double copy_ns = time_gpu([&] { s.copy(a, b, bytes); });
  uint32_t spec[] = {256};
  const Pipeline& vec4 = dev.pipeline("copy_vec4", spec);
  struct { uint64_t dst, src; int64_t count; } push{b, a, int64_t(bytes / 16)};
  MemRange r{a, bytes}, w{b, bytes};
  uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>(bytes / 16 / 256, 65535));
  double shader_ns = time_gpu([&] { s.dispatch(vec4, groups, 1, 1, &push, sizeof push, {&r, 1}, {&w, 1}); });
  std::printf("copy bandwidth (read+write), %llu MiB: vkCmdCopyBuffer %.1f GB/s, vec4 shader %.1f GB/s\n",
              (unsigned long long)(bytes >> 20), 2.0 * bytes / copy_ns, 2.0 * bytes / shader_ns);

  // Dispatch cost: tiny dependent dispatches (barrier each) and independent ones.
  const int n = quick ? 200 : 2000;
  uint64_t tiny = dev.allocate(4096);
  struct { uint64_t dst, src; int64_t count; } tp{tiny + 2048, tiny, 1};
  MemRange tr{tiny, 16}, tw{tiny + 2048, 16};
  auto tiny_run = [&](bool dependent) {
    for (int i = 0; i < n; ++i) {
      if (dependent) {
        s.dispatch(vec4, 1, 1, 1, &tp, sizeof tp, {&tw, 1}, {&tw, 1});
      } else {
        s.dispatch(vec4, 1, 1, 1, &tp, sizeof tp, {&tr, 1}, {});
      }
    }
  };
  double dep_ns = time_gpu([&] { tiny_run(true); }) / n;
  double indep_ns = time_gpu([&] { tiny_run(false); }) / n;
  std::vector<double> host;
  for (int k = 0; k < 5; ++k) {
    dev.synchronize();
    auto t0 = std::chrono::steady_clock::now();
    tiny_run(false);
    host.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n);
  }
  dev.synchronize();
  std::printf("dispatch: GPU %.2f us each with a barrier, %.2f us without; host recording %.2f us\n",
              dep_ns / 1000, indep_ns / 1000, median(host) / 1000);
  std::printf("timing source: %s\n", ts ? "GPU timestamps" : "host wall clock (no timestamps)");
  dev.free(tiny);
  dev.free(a);
  dev.free(b);
  return 0;
}
