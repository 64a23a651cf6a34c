"""torch.compile(mode="reduce-overhead") on vkml: compiled graphs replayed from captured command
buffers (torch_vkml.graphs), as Inductor's CUDA graphs do on CUDA.

Inductor turns CUDA graphs off for a graph whose device is not "cuda". The hook here wraps
`CompiledFxGraph.post_compile`: when `config.triton.cudagraphs` is on (reduce-overhead) and the
graph runs on vkml alone, its callable becomes a `ReplayedGraph`. Per input-shape key it runs
plainly for the warm-up calls, then captures once into static input buffers and replays; inputs
that Dynamo marks static (parameters, buffers) are used in place. A call that cannot be captured
runs plainly, counted by reason in `replay_stats()`.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import torch

_stats: collections.Counter = collections.Counter()

# Plain calls per input-shape key before the capture: lazy state (pipelines, autotuning caches,
# the first allocations) settles outside it.
WARMUP_CALLS = 1


def replay_stats() -> dict[str, int]:
    """Counts: "captures", "replays", "input copies" (into the captured inputs before a replay)
    and "fallback: <reason>" for calls that ran plainly."""
    return dict(_stats)


def reset_replay_stats() -> None:
    _stats.clear()


class _Capture:
    __slots__ = ("graph", "static_args", "outputs", "static_inputs")

    def __init__(self, graph: Any, static_args: list, outputs: list, static_inputs: Any) -> None:
        self.graph, self.static_args, self.outputs = graph, static_args, outputs
        self.static_inputs = static_inputs


class ReplayedGraph:
    """A compiled graph's boxed callable (it takes a list of inputs and clears it) that replays
    one capture per input-shape key."""

    def __init__(self, model: Callable, static_input_idxs: Any, mutated_input_idxs: Any,
                 clone_outputs: bool) -> None:
        self.model = model
        # A training forward's outputs include what its backward reads: they are cloned, so
        # that a second forward before the backward does not overwrite them.
        self.clone_outputs = clone_outputs
        self.static_idxs = set(static_input_idxs or ())
        self.mutated_idxs = sorted(mutated_input_idxs or ())
        self.kinds: list[str] | None = None  # per input: static, copy, int, value, other
        self.copy_idxs: list[int] = []
        self.static_list: list[int] = []
        self.refusal = ""  # set when no input layout can ever be captured
        self.calls: collections.Counter = collections.Counter()
        self.captures: dict[tuple, _Capture | str] = {}

    def _classify(self, args: list) -> None:
        kinds = []
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor) and a.device.type == "cpu" and a.dim() == 0:
                kinds.append("value")  # read on the host at capture: part of the key
            elif isinstance(a, torch.Tensor):
                if a.device.type != "vkml":
                    self.refusal = f"{a.device.type} tensor input"
                kinds.append("static" if i in self.static_idxs else "copy")
            elif isinstance(a, (int, torch.SymInt)):
                kinds.append("int")
            else:
                self.refusal = f"{type(a).__name__} input"
                kinds.append("other")
        self.kinds = kinds
        self.copy_idxs = [i for i, k in enumerate(kinds) if k == "copy"]
        self.static_list = [i for i, k in enumerate(kinds) if k == "static"]

    def _key(self, args: list) -> tuple:
        key = []
        for i in self.copy_idxs:
            a = args[i]
            key.append((a.shape, a.stride(), a.dtype, a.device.index))
        for i, k in enumerate(self.kinds):
            if k == "int":
                key.append(int(args[i]))
            elif k == "value":
                key.append((args[i].dtype, args[i].item()))
        return tuple(key)

    def _plain(self, args: list, reason: str) -> Any:
        if reason:
            _stats["fallback: " + reason] += 1
        return self.model(args)

    def _capture(self, args: list) -> _Capture | str:
        from ..graphs import VkmlGraph, graph

        static_args = list(args)
        for i in self.copy_idxs:
            a = args[i]
            if not torch._prims_common.is_non_overlapping_and_dense_or_false(a):
                return "overlapping or sparse input strides"
            s = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
            s.copy_(a)
            static_args[i] = s
        g = VkmlGraph()
        try:
            with graph(g):
                outputs = self.model(list(static_args))
        except RuntimeError as e:
            if "capturing" not in str(e):
                raise
            return "capture refused: " + str(e).splitlines()[0]
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        from .. import _C

        _stats["captures"] += 1
        return _Capture(g, static_args, outputs, _C._StaticInputs(args, self.static_list))

    def __call__(self, args: list) -> Any:
        if self.kinds is None:
            self._classify(args)
        if self.refusal:
            return self._plain(args, self.refusal)
        if torch.is_grad_enabled() and any(args[i].requires_grad for i in self.copy_idxs):
            return self._plain(args, "an input requires grad")
        key = self._key(args)
        cap = self.captures.get(key)
        if cap is not None and not isinstance(cap, str) and \
                not cap.static_inputs.unchanged(args):
            _stats["recaptures: a static input moved"] += 1
            cap = None
        if cap is None:
            self.calls[key] += 1
            if self.calls[key] <= WARMUP_CALLS:
                return self.model(args)
            cap = self._capture(args)
            self.captures[key] = cap
        if isinstance(cap, str):
            return self._plain(args, cap)
        static = cap.static_args
        copies = 0
        for i in self.copy_idxs:
            if static[i].data_ptr() != args[i].data_ptr():
                static[i].copy_(args[i])
                copies += 1
        cap.graph.replay()
        for i in self.mutated_idxs:
            if i in self.copy_idxs:
                args[i].copy_(static[i])
        _stats["replays"] += 1
        _stats["input copies"] += copies
        args.clear()
        if self.clone_outputs:
            return [o.clone() if isinstance(o, torch.Tensor) else o for o in cap.outputs]
        return list(cap.outputs)


def _on_vkml_alone(compiled: Any) -> bool:
    # A CPU kernel would run once, at capture, and never again: such graphs run plainly.
    return set(getattr(compiled, "device_types", ()) or ()) == {"vkml"}


def patch_post_compile() -> None:
    """Wraps CompiledFxGraph.post_compile so that reduce-overhead graphs on vkml replay."""
    from torch._inductor import config
    from torch._inductor.output_code import CompiledFxGraph

    if getattr(CompiledFxGraph, "_vkml_replay_patched", False):
        return
    original = CompiledFxGraph.post_compile

    def post_compile(self: Any, example_inputs: Any, constants: Any, graph_kwargs: Any) -> None:
        original(self, example_inputs, constants, graph_kwargs)
        if not config.triton.cudagraphs or not _on_vkml_alone(self):
            return
        if self.current_callable is None or isinstance(self.current_callable, ReplayedGraph):
            return
        # Inductor keeps the compile's static inputs and kind in fx_kwargs.
        kw = {**graph_kwargs, **(getattr(self, "fx_kwargs", None) or {})}
        self.current_callable = ReplayedGraph(
            self.current_callable, kw.get("static_input_idxs", ()),
            getattr(self, "mutated_input_idxs", ()),
            clone_outputs=not kw.get("is_inference", False) and not kw.get("is_backward", False))

    CompiledFxGraph.post_compile = post_compile
    CompiledFxGraph._vkml_replay_patched = True
