// torch_vkml._C: the Python-facing functions of the bridge (device queries, memory, RNG glue).
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/utils/pybind.h>

#include "common/bridge.h"
#include "device/fallback.h"
#include "device/generator.h"
#include "vkml/config.h"
#include "vkml/host_memory.h"
#include "vkml/profiling.h"

namespace py = pybind11;

namespace torch_vkml {

namespace device_module {

py::dict device_properties(int index) {
  const vkml::DeviceCaps& c = core_device(static_cast<c10::DeviceIndex>(index)).caps();
  py::dict d;
  d["name"] = c.name;
  d["vendor_id"] = c.vendor_id;
  d["device_id"] = c.device_id;
  d["driver_name"] = c.driver_name;
  d["driver_info"] = c.driver_info;
  d["driver_version"] = vkml::format_driver_version(c);
  d["api_version"] = std::to_string(VK_API_VERSION_MAJOR_(c.api_version)) + "." +
                     std::to_string(VK_API_VERSION_MINOR_(c.api_version)) + "." +
                     std::to_string(VK_API_VERSION_PATCH_(c.api_version));
  d["type"] = std::string(vkml::device_kind_name(c.kind));
  uint64_t total = 0;
  for (const auto& h : c.heaps) {
    if (h.device_local) total = std::max(total, h.size);
  }
  d["total_memory"] = total;
  d["unified_memory"] = c.unified_memory;
  d["fp16"] = c.fp16_math;
  d["bf16"] = c.bf16_math;
  d["fp64"] = c.fp64_math;
  d["int8"] = c.int8_math;
  d["int64"] = c.int64_math;
  d["subgroup_size"] = c.subgroup_size;
  d["subgroup_arithmetic"] = (c.subgroup_ops & 0x4u) != 0;  // VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
  d["max_shared_memory"] = c.max_shared_memory;
  d["cooperative_matrix"] = c.coopmat;
  d["cooperative_matrix_bf16"] = c.coopmat_bf16;
  py::list shapes;
  for (const auto& s : c.coopmat_shapes) {
    shapes.append(py::make_tuple(s.m, s.n, s.k, std::string(vkml::dtype_name(s.a)),
                                 std::string(vkml::dtype_name(s.result))));
  }
  d["cooperative_matrix_shapes"] = shapes;
  return d;
}

py::dict memory_stats(int index) {
  vkml::MemoryStats m = core_device(static_cast<c10::DeviceIndex>(index)).memory_stats();
  py::dict d;
  d["allocated_bytes.all.current"] = m.allocated;
  d["allocated_bytes.all.peak"] = m.peak_allocated;
  d["reserved_bytes.all.current"] = m.reserved;
  d["reserved_bytes.all.peak"] = m.peak_reserved;
  d["requested_bytes.all.current"] = m.requested;
  d["num_alloc"] = m.num_allocs;
  d["num_free"] = m.num_frees;
  d["num_device_alloc"] = m.num_driver_allocs;
  d["num_device_free"] = m.num_driver_frees;
  d["device_alloc_ns"] = m.driver_alloc_ns;
  d["segment.all.current"] = m.num_segments;
  d["num_ooms"] = m.num_ooms;
  d["host_spilled_bytes"] = m.host_spilled;
  return d;
}

py::dict host_memory_stats(int index) {
  vkml::HostMemoryStats m =
      vkml::host_memory_stats(core_device(static_cast<c10::DeviceIndex>(index)));
  py::dict d;
  d["allocated_bytes"] = m.allocated;
  d["allocated_bytes_peak"] = m.peak_allocated;
  d["reserved_bytes"] = m.reserved;
  d["num_alloc"] = m.num_allocs;
  d["num_free"] = m.num_frees;
  d["num_blocks"] = m.num_blocks;
  d["num_host_alloc"] = m.num_driver_allocs;
  d["num_host_free"] = m.num_driver_frees;
  d["copies"] = m.copies_recorded;
  return d;
}

}  // namespace device_module

void register_embedding_renorm();  // ops/embedding/embedding.cpp
int extend_autograd_device_queues();  // device/engine_queues.cpp
void bind_graphs(py::module& m);      // device/graphs.cpp

}  // namespace torch_vkml

PYBIND11_MODULE(_C, m) {
  torch_vkml::register_embedding_renorm();
  // An import after a backward pass has run: autograd's engine gets its vkml device queues.
  torch_vkml::extend_autograd_device_queues();
  using namespace torch_vkml;
  m.doc() = "vkml: PyTorch device on Vulkan compute";
  bind_graphs(m);
  // Parses the settings; torch_vkml's import calls it, so that a bad VKML_* value fails the
  // import with a ValueError naming it, before any device exists.
  m.def("check_config", [] {
    try {
      vkml::config();
    } catch (const vkml::InvalidArgument& e) {
      throw py::value_error(e.what());
    }
  });
  m.def("config_entries", [] {
    py::list out;
    for (const vkml::ConfigEntry& e : translate_errors([] { return vkml::config_entries(); })) {
      py::dict d;
      d["name"] = e.name;
      d["value"] = e.value;
      d["default"] = e.default_text;
      d["kind"] = e.kind;
      d["allowed"] = e.allowed;
      d["tier"] = std::string(vkml::config_tier_name(e.tier));
      d["source"] = std::string(vkml::config_source_name(e.source));
      d["help"] = e.help;
      out.append(d);
    }
    return out;
  });
  m.def("config_set", [](const std::string& name, const std::string& text) {
    translate_errors([&] { vkml::set_config(name, text); return 0; });
  });
  m.def("config_restore", [](const std::string& name, const std::string& text,
                             const std::string& source) {
    translate_errors([&] {
      vkml::ConfigEntry saved = vkml::config_entry(name);
      saved.value = text;
      saved.source = source == "environment" ? vkml::ConfigSource::kEnvironment
                     : source == "override"  ? vkml::ConfigSource::kOverride
                                             : vkml::ConfigSource::kDefault;
      vkml::restore_config(saved);
      return 0;
    });
  });
  m.def("config_markdown", &vkml::config_markdown);
  m.def("device_count", [] { return static_cast<int>(device_count()); });
  m.def("no_device_reason", &vkml::no_device_reason);
  m.def("current_device", [] { return static_cast<int>(current_device()); });
  m.def("set_device", [](int i) { set_current_device(static_cast<c10::DeviceIndex>(i)); });
  m.def("synchronize", [](int i) {
    py::gil_scoped_release release;
    translate_errors([&] { core_device(static_cast<c10::DeviceIndex>(i)).synchronize(); });
  });
  m.def("device_properties", &device_module::device_properties);
  m.def("memory_stats", &device_module::memory_stats);
  m.def("host_memory_stats", &device_module::host_memory_stats);
  m.def("empty_host_cache", [](int i) {
    translate_errors([&] { vkml::empty_host_cache(core_device(static_cast<c10::DeviceIndex>(i))); });
  });
  m.def("empty_cache", [](int i) {
    py::gil_scoped_release release;
    core_device(static_cast<c10::DeviceIndex>(i)).empty_cache();
  });
  m.def("reset_peak_memory_stats", [](int i) {
    core_device(static_cast<c10::DeviceIndex>(i)).reset_peak_memory_stats();
  });
  m.def("mem_get_info", [](int i) { return core_device(static_cast<c10::DeviceIndex>(i)).mem_get_info(); });
  m.def("set_memory_limit", [](int i, uint64_t bytes) {
    core_device(static_cast<c10::DeviceIndex>(i)).set_memory_limit(bytes);
  });
  m.def("memory_limit", [](int i) { return core_device(static_cast<c10::DeviceIndex>(i)).memory_limit(); });
  m.def("default_generator", [](int i) { return default_generator(static_cast<c10::DeviceIndex>(i)); });
  m.def("fallback_stats", &fallback_stats);
  m.def("reset_fallback_stats", &reset_fallback_stats);
  m.def("validation_message_count", &vkml::validation_message_count);
  m.def("validation_enabled", &vkml::validation_enabled);
  m.def("shader_variants", &vkml::shader_variants);
  m.def("skipped_shader_variants", &vkml::skipped_shader_variants);
  m.def("stream_stats", [](int i) {
    auto& s = core_device(static_cast<c10::DeviceIndex>(i)).stream();
    py::dict d;
    d["dispatches"] = s.dispatches_recorded();
    d["barriers"] = s.barriers_recorded();
    d["submits"] = s.submits();
    d["submissions"] = s.submissions();
    d["cost_submissions"] = s.cost_submissions();
    d["ramp_submissions"] = s.ramp_submissions();
    d["pipelines_created"] = core_device(static_cast<c10::DeviceIndex>(i)).pipelines_created();
    d["pipeline_build_ns"] = core_device(static_cast<c10::DeviceIndex>(i)).pipeline_build_ns();
    d["pipeline_wait_ns"] = s.pipeline_wait_ns();
    return d;
  });
  m.def("set_profiling", [](int i, bool on) {
    vkml::set_profiling(core_device(static_cast<c10::DeviceIndex>(i)).stream(), on);
  });
  m.def("kernel_times", [](int i, bool reset) {
    py::dict d;
    for (auto& [name, t] : vkml::kernel_times(core_device(static_cast<c10::DeviceIndex>(i)).stream(), reset)) {
      d[py::str(name)] = py::make_tuple(t.count, t.total_ns);
    }
    return d;
  });
}
