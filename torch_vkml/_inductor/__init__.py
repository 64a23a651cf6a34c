"""torch.compile on vkml: an Inductor backend that generates GLSL compute kernels.

`install()` (called by `import torch_vkml`) costs no import of Dynamo or Inductor: each hook runs
when torch imports the module it concerns. docs/compile.md lists every hook."""

from __future__ import annotations

import importlib.abc
import importlib.util
import inspect
import sys
import threading

_lock = threading.Lock()
_backend_registered = False


def _set_inductor_config(config) -> None:
    # Inductor's random lowering draws numbers with Triton's Philox stream; eager vkml draws
    # with its own. Falling back to the eager random ops keeps compiled and eager runs equal.
    config.fallback_random = True


def _register_dynamo_interface(device_interface) -> None:
    from .device_interface import make_interface

    device_interface.register_interface_for_device(
        "vkml", make_interface(device_interface.DeviceInterface))


def _patch_scatter_fallbacks() -> None:
    """Scatter-adds (index_put with accumulate, scatter_add, embedding backward) run vkml's
    deterministic eager kernels instead of atomics in generated code."""
    from torch._inductor import lowering
    from torch._inductor.virtualized import V

    def lowering_vkml() -> bool:
        try:
            return "vkml" in V.graph.device_types
        except Exception:
            return False

    if getattr(lowering, "_vkml_patched", False):
        return
    atomic = lowering.needs_fallback_due_to_atomic_add_limitations
    scatter = lowering.use_scatter_fallback

    def needs_fallback(dtype, *args, **kwargs):
        return lowering_vkml() or atomic(dtype, *args, **kwargs)

    def use_scatter(*args, **kwargs):
        return lowering_vkml() or scatter(*args, **kwargs)

    lowering.needs_fallback_due_to_atomic_add_limitations = needs_fallback
    lowering.use_scatter_fallback = use_scatter
    lowering._vkml_patched = True


class _NoCppWrapper:
    """AOTInductor / cpp_wrapper have no vkml kernel launcher."""

    @staticmethod
    def create(*args, **kwargs):
        raise NotImplementedError("vkml torch.compile: cpp_wrapper and AOTInductor are not supported")


def register_backend() -> None:
    """Registers the scheduling, the wrapper and the device op overrides with Inductor."""
    global _backend_registered
    with _lock:
        if _backend_registered:
            return
        from torch._dynamo import device_interface
        from torch._inductor import config
        from torch._inductor.codegen.common import (
            register_backend_for_device,
            register_device_op_overrides,
        )

        from .kernel import VkmlScheduling
        from .wrapper import VkmlDeviceOpOverrides, VkmlWrapperCodegen

        _set_inductor_config(config)
        _register_dynamo_interface(device_interface)
        _patch_scatter_fallbacks()
        from . import codegen_config
        from .replay import patch_post_compile

        patch_post_compile()

        extra = {}
        if "device_custom_config" in inspect.signature(register_backend_for_device).parameters:
            extra["device_custom_config"] = codegen_config
        register_backend_for_device("vkml", VkmlScheduling, VkmlWrapperCodegen, _NoCppWrapper,
                                    **extra)
        register_device_op_overrides("vkml", VkmlDeviceOpOverrides())
        _backend_registered = True


def _device_module_getattr(name: str):
    # init_backend_registration() looks these names up on torch.vkml (the renamed PrivateUse1
    # backend's module).
    # Registering here, with our codegen config, and then answering "absent" keeps
    # init_backend_registration from registering the backend a second time without it.
    if name == "Scheduling":
        register_backend()
    raise AttributeError(f"module 'torch.vkml' has no attribute '{name}'")


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, hook):
        self.inner, self.hook = inner, hook

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        self.hook(module)


class _PostImportHooks(importlib.abc.MetaPathFinder):
    """Runs a function on a module right after torch imports it."""

    def __init__(self, hooks):
        self.hooks = hooks

    def find_spec(self, name, path, target=None):
        hook = self.hooks.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, hook)
                return spec
        return None


def _register_post_grad_patterns(post_grad) -> None:
    from .epilogue import register

    register(post_grad)


def install(device_module) -> None:
    hooks = {
        "torch._inductor.config": _set_inductor_config,
        "torch._dynamo.device_interface": _register_dynamo_interface,
        "torch._inductor.fx_passes.post_grad": _register_post_grad_patterns,
    }
    pending = {}
    for name, hook in hooks.items():
        if name in sys.modules:
            hook(sys.modules[name])
        else:
            pending[name] = hook
    if pending:
        sys.meta_path.insert(0, _PostImportHooks(pending))
    if not hasattr(device_module, "__getattr__"):
        device_module.__getattr__ = _device_module_getattr
    if "torch._inductor.codegen.common" in sys.modules:
        register_backend()  # Inductor was loaded first: its registration may already have run
