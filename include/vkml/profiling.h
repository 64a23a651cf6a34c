// Per-kernel GPU times of a stream, to find where a model's step goes (VKML_PROFILE=1 turns it on
// at start). Profiling serialises the stream and waits after each submit: use it to find hot
// kernels, not to time a model.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace vkml {

class Stream;

struct KernelTime {
  uint64_t count = 0;
  double total_ns = 0;
};

void set_profiling(Stream& stream, bool on);
std::map<std::string, KernelTime> kernel_times(Stream& stream, bool reset);

// With VKML_PROFILE=2 each kernel is reported under its name and the shape of the op that
// recorded it (a ProfileTag on that thread), e.g. "gemm_simtn_f32_f32 [mm 768x768x12608 ...]".
bool profiling_shapes();

// Names the op recorded on this thread while it lives; the outermost tag wins, so the passes of
// a composite op (the fp32 split's GEMMs) are reported under the product they serve.
class ProfileTag {
 public:
  explicit ProfileTag(const std::string& tag);
  ~ProfileTag();
  ProfileTag(const ProfileTag&) = delete;
  ProfileTag& operator=(const ProfileTag&) = delete;
  static const std::string& current();

 private:
  bool owner_ = false;
};

}  // namespace vkml
