// torch_vkml._C's graph capture functions (torch_vkml/graphs.py): begin and end a capture on a
// device, replay a graph, and capture pool handles.
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include "common/bridge.h"
#include "vkml/graph.h"

namespace py = pybind11;

namespace torch_vkml {

namespace device_graphs {
// The types Python holds have internal linkage, as pybind11's own (hidden) types do.
namespace {

// A capture pool as Python holds it (torch_vkml.graph_pool_handle()).
struct PoolHandle {
  std::shared_ptr<vkml::CapturePool> pool;
};

// A captured graph as Python holds it (torch_vkml.VkmlGraph).
struct GraphHandle {
  std::shared_ptr<vkml::Graph> graph;
};

// The addresses a replayed compiled graph's static inputs had at capture (its parameters and
// buffers): a call checks them in one pass instead of one Python call per tensor.
struct StaticInputs {
  std::vector<int64_t> indices;
  std::vector<uint64_t> addresses;

  bool unchanged(const py::list& args) const {
    for (size_t k = 0; k < indices.size(); ++k) {
      PyObject* o = PyList_GET_ITEM(args.ptr(), indices[k]);
      if (!THPVariable_Check(o)) return false;
      const at::Tensor& t = THPVariable_Unpack(o);
      if (reinterpret_cast<uint64_t>(t.data_ptr()) != addresses[k]) return false;
    }
    return true;
  }
};

}  // namespace

vkml::Device& graph_device(int index) { return core_device(static_cast<c10::DeviceIndex>(index)); }

}  // namespace device_graphs

void bind_graphs(py::module& m) {
  using namespace device_graphs;
  py::class_<PoolHandle, std::shared_ptr<PoolHandle>>(m, "_CapturePool");
  py::class_<StaticInputs>(m, "_StaticInputs")
      .def(py::init([](const py::list& args, std::vector<int64_t> indices) {
        StaticInputs s{std::move(indices), {}};
        for (int64_t i : s.indices) {
          s.addresses.push_back(reinterpret_cast<uint64_t>(
              THPVariable_Unpack(PyList_GET_ITEM(args.ptr(), i)).data_ptr()));
        }
        return s;
      }))
      .def("unchanged", &StaticInputs::unchanged);
  py::class_<GraphHandle>(m, "_Graph")
      .def("replay", [](GraphHandle& h) { translate_errors([&] { return h.graph->replay(); }); })
      .def_property_readonly("commands", [](const GraphHandle& h) { return h.graph->commands(); })
      .def("pool", [](const GraphHandle& h) {
        return std::make_shared<PoolHandle>(PoolHandle{h.graph->pool()});
      });
  m.def("graph_pool_handle", [](int device) {
    return std::make_shared<PoolHandle>(
        PoolHandle{translate_errors([&] { return vkml::create_capture_pool(graph_device(device)); })});
  });
  m.def("capture_begin", [](int device, std::shared_ptr<PoolHandle> pool) {
    translate_errors([&] {
      vkml::begin_capture(graph_device(device), pool ? pool->pool : nullptr);
      return 0;
    });
  }, py::arg("device"), py::arg("pool") = nullptr);
  m.def("capture_end", [](int device) {
    return GraphHandle{std::shared_ptr<vkml::Graph>(
        translate_errors([&] { return vkml::end_capture(graph_device(device)); }))};
  });
  m.def("is_capturing", [](int device) {
    return translate_errors([&] { return vkml::capturing(graph_device(device)); });
  });
}

}  // namespace torch_vkml
