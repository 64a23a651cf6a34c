"""vkml: a PyTorch device on Vulkan compute.

    import torch, torch_vkml
    x = torch.randn(4, 4, device="vkml")        # or torch_vkml.device()
    model.to("vkml")

It also answers torch-directml's API, so `import torch_vkml as torch_directml` runs code written
for DirectML unchanged.
"""

from __future__ import annotations

import torch

from ._build_check import check_torch_version as _check_torch_version

_check_torch_version()  # before _C: another torch's symbols would fail to resolve

from . import _C  # noqa: E402  registers allocator, guard, hooks and kernels (static initialisers)

_C.check_config()  # a bad VKML_* value is a ValueError naming it

if torch._C._get_privateuse1_backend_name() != "vkml":
    torch.utils.rename_privateuse1_backend("vkml")

from . import _device as vkml  # noqa: E402  (needs the backend name first)
from ._device import (  # noqa: E402,F401
    current_device,
    default_device,
    device,
    device_count,
    device_name,
    empty_cache,
    empty_host_cache,
    fallback_stats,
    get_device_properties,
    get_rng_state,
    gpu_memory,
    has_float64_support,
    host_memory_stats,
    initial_seed,
    is_available,
    is_bf16_supported,
    manual_seed,
    manual_seed_all,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_fallback_stats,
    reset_peak_memory_stats,
    seed,
    set_device,
    set_memory_limit,
    set_rng_state,
    synchronize,
)

torch._register_device_module("vkml", vkml)
_unsupported = [torch.complex32, torch.complex64, torch.complex128, torch.quint8, torch.qint8,
                torch.qint32, torch.quint4x2, torch.quint2x4]
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_storage=True, unsupported_dtype=_unsupported)

from . import graphs  # noqa: E402  (torch.cuda.graphs' counterpart, also as torch.vkml.graphs)
from .graphs import (  # noqa: E402,F401
    VkmlGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)

for _name in graphs.__all__:
    setattr(vkml, _name, getattr(graphs, _name))
vkml.graphs = graphs

from . import distributed  # noqa: E402,F401  (registers the "vkml" torch.distributed backend)
from . import config  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
from . import _inductor  # noqa: E402  (torch.compile: hooks run as torch loads Dynamo and Inductor)

_inductor.install(vkml)

from . import _no_fp64  # noqa: E402  (printing, GradScaler: float32 on devices without fp64)

_no_fp64.install()


def _autoload() -> None:
    """torch's device-backend autoload entry point (pyproject): importing this module is all."""


__all__ = [name for name in dir(vkml) if not name.startswith("_")]
__version__ = "0.1.0"
