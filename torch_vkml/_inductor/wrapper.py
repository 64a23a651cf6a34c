"""Host-side pieces: the Python wrapper codegen and the device op overrides it asks for."""

from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides
from torch._inductor.codegen.wrapper import PythonWrapperCodegen


class VkmlDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"def {name}(idx): return 0"

    def set_device(self, device_idx: int) -> str:
        return f"torch.vkml.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.vkml.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch_vkml._inductor.runtime.device_guard({device_idx})"


class VkmlWrapperCodegen(PythonWrapperCodegen):
    """Python wrapper that imports the launcher of generated kernels."""

    @staticmethod
    def create(is_subgraph, *args, **kwargs):
        if is_subgraph:
            return PythonWrapperCodegen.create(is_subgraph, *args, **kwargs)
        return VkmlWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.imports.writeline("import torch_vkml._inductor.runtime")
        self.imports.writeline("from torch_vkml._inductor.runtime import async_compile_vkml")
