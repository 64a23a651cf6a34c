"""Graph capture and replay on vkml, as torch.cuda.graphs on CUDA.

    g = torch_vkml.VkmlGraph()
    static_x = torch.randn(8, 64, device="vkml")
    model(static_x)                       # warm-up outside the capture (pipelines, lazy state)
    with torch_vkml.graph(g):
        static_y = model(static_x)
    static_x.copy_(new_x); g.replay()     # static_y holds model(new_x)

The capture records every dispatch, copy and fill of the device's stream into one Vulkan
command buffer, and `replay()` submits it in one queue submission. Tensor addresses are baked
into the recorded commands: a replay reads the tensors the capture read and writes the ones it
wrote, so new inputs are copied into the captured inputs, and outputs are overwritten by the
next replay. Memory allocated while capturing comes from the graph's pool and stays reserved
until the graph (and every handle to its pool) is gone. Work that needs the host while capturing
(`.item()`, `.cpu()`, printing a tensor, `synchronize()`, a host-to-device copy, an op that
falls back to the CPU) raises RuntimeError ("operation not permitted when stream is capturing").
Random ops replay the numbers drawn during the capture.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import torch

from . import _C
from ._device import _index, current_device, synchronize

__all__ = ["VkmlGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]


def graph_pool_handle(device: Any = None) -> Any:
    """A capture pool that several graphs may share (`pool=` of VkmlGraph.capture_begin)."""
    return _C.graph_pool_handle(_index(device))


def is_current_stream_capturing(device: Any = None) -> bool:
    return bool(_C.is_capturing(_index(device)))


class VkmlGraph:
    """One captured graph of the device's stream (torch.cuda.CUDAGraph's interface)."""

    def __init__(self, keep_graph: bool = False) -> None:
        self._graph = None
        self._device: int | None = None

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global") -> None:
        if self._graph is not None:
            raise RuntimeError("this VkmlGraph holds a capture already; call reset() first")
        self._device = current_device()
        _C.capture_begin(self._device, pool)

    def capture_end(self) -> None:
        self._graph = _C.capture_end(self._device)

    def replay(self) -> None:
        if self._graph is None:
            raise RuntimeError("VkmlGraph.replay(): nothing was captured")
        self._graph.replay()

    def reset(self) -> None:
        """Drops the capture; its pool's memory is freed once no other graph or handle uses it."""
        self._graph = None

    def pool(self) -> Any:
        if self._graph is None:
            raise RuntimeError("VkmlGraph.pool(): nothing was captured")
        return self._graph.pool()

    @property
    def commands(self) -> int:
        """Dispatches, copies and fills the capture recorded."""
        return 0 if self._graph is None else self._graph.commands

    def instantiate(self) -> None:
        """Nothing to do: the command buffer is ready once captured."""

    def enable_debug_mode(self) -> None:
        pass

    def debug_dump(self, path: str) -> None:
        raise NotImplementedError("VkmlGraph.debug_dump: vkml graphs have no dump format")


class graph:
    """Context manager that captures the work inside it into `vkml_graph` (torch.cuda.graph).

    `stream` is accepted for torch.cuda.graph's signature: vkml has one ordered queue per
    device, so every stream is that queue. When the body raises, the capture ends and the
    graph stays empty.
    """

    def __init__(self, vkml_graph: VkmlGraph, pool: Any = None, stream: Any = None,
                 capture_error_mode: str = "global") -> None:
        self.graph = vkml_graph
        self.pool = pool
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        synchronize()
        gc.collect()  # tensors freed by the collector during the capture would join its pool
        self.graph.capture_begin(self.pool, self.capture_error_mode)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.graph.capture_end()
            return
        try:
            self.graph.capture_end()
        finally:
            self.graph.reset()


def _tensors(args: tuple) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor)]


class _GraphedCall:
    """The forward and backward graphs of one callable and the autograd function that replays
    them (see make_graphed_callables)."""

    def __init__(self, fn: Callable, sample_args: tuple, num_warmup_iters: int,
                 allow_unused_input: bool, pool: Any) -> None:
        params = tuple(p for p in fn.parameters() if p.requires_grad) \
            if isinstance(fn, torch.nn.Module) else ()
        self.n_args = len(sample_args)
        self.static_inputs = tuple(sample_args) + params
        grad_inputs = [t for t in self.static_inputs if t.requires_grad]
        outs: Any = None
        for _ in range(num_warmup_iters):  # pipelines build and lazy state settles first
            outs = self._flat(fn(*sample_args))
            outs_grad = [o for o in outs if o.requires_grad]
            if outs_grad and grad_inputs:
                torch.autograd.grad(outs_grad, grad_inputs, [torch.ones_like(o) for o in outs_grad],
                                    allow_unused=allow_unused_input)
        del outs
        self.fwd = VkmlGraph()
        with graph(self.fwd, pool=pool):
            outs = fn(*sample_args)
        self.structure_tuple = isinstance(outs, tuple)
        self.static_outputs = self._flat(outs)
        self.needs_grad = [o.requires_grad for o in self.static_outputs]
        self.static_grad_outputs = [torch.empty_like(o) if o.requires_grad else None
                                    for o in self.static_outputs]
        self.bwd = VkmlGraph()
        self.static_grad_inputs: tuple = ()
        if any(self.needs_grad) and grad_inputs:
            with graph(self.bwd, pool=self.fwd.pool()):
                grads = torch.autograd.grad(
                    [o for o in self.static_outputs if o.requires_grad], grad_inputs,
                    [g for g in self.static_grad_outputs if g is not None],
                    allow_unused=allow_unused_input)
            it = iter(grads)
            self.static_grad_inputs = tuple(next(it) if t.requires_grad else None
                                            for t in self.static_inputs)
        self.function = self._autograd_function()

    @staticmethod
    def _flat(out: Any) -> list[torch.Tensor]:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if not all(isinstance(o, torch.Tensor) for o in outs):
            raise TypeError("make_graphed_callables: a callable must return a tensor or a tuple of "
                            "tensors")
        return outs

    def _autograd_function(self) -> type:
        call = self

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, *inputs: torch.Tensor) -> tuple:
                for static, new in zip(call.static_inputs, inputs, strict=True):
                    if static.data_ptr() != new.data_ptr():
                        static.copy_(new)
                call.fwd.replay()
                return tuple(o.detach() for o in call.static_outputs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx: Any, *grads: torch.Tensor) -> tuple:
                for static, g in zip(call.static_grad_outputs, grads, strict=True):
                    if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                        static.copy_(g)
                call.bwd.replay()
                return tuple(g.detach() if g is not None else None
                             for g in call.static_grad_inputs) or (None,) * len(call.static_inputs)

        return Graphed

    def __call__(self, *args: torch.Tensor) -> Any:
        if len(args) != self.n_args:
            raise TypeError(f"graphed callable takes {self.n_args} arguments, got {len(args)}")
        outs = self.function.apply(*args, *self.static_inputs[self.n_args:])
        return outs if self.structure_tuple else outs[0]


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: Any = None) -> Any:
    """Graphed versions of callables (functions or modules), as torch.cuda.make_graphed_callables.

    Each callable's forward and backward run as two captured graphs; its arguments are copied
    into the sample arguments' memory before each replay, and its outputs are overwritten by the
    next one. A module keeps its graphed forward while its training mode matches the one at
    capture, and runs eagerly otherwise. A tuple of callables takes a tuple of sample argument
    tuples and gives a tuple back.
    """
    single = not isinstance(callables, tuple)
    fns = (callables,) if single else callables
    samples = (sample_args,) if single else sample_args
    if len(fns) != len(samples):
        raise ValueError("make_graphed_callables: one sample argument tuple per callable")
    out = []
    for fn, args in zip(fns, samples, strict=True):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        if not all(isinstance(a, torch.Tensor) and a.device.type == "vkml" for a in args):
            raise TypeError("make_graphed_callables: sample arguments must be vkml tensors")
        if isinstance(fn, torch.nn.Module) and fn._backward_hooks or \
                isinstance(fn, torch.nn.Module) and fn._forward_hooks:
            raise RuntimeError("make_graphed_callables: modules with hooks are not supported")
        call = _GraphedCall(fn, args, num_warmup_iters, allow_unused_input, pool)
        if isinstance(fn, torch.nn.Module):
            eager_forward, mode = fn.forward, fn.training

            def forward(*a: Any, _call: Any = call, _eager: Any = eager_forward, _mode: bool = mode,
                        _fn: Any = fn) -> Any:
                return _call(*a) if _fn.training == _mode else _eager(*a)

            fn.forward = forward
            out.append(fn)
        else:
            out.append(call)
    return out[0] if single else tuple(out)
