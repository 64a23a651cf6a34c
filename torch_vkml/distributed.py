"""torch.distributed for vkml tensors: collectives staged through host memory and run by Gloo.

    import torch_vkml.distributed  # registers the "vkml" backend (import torch_vkml does it too)
    dist.init_process_group("vkml")          # or backend=None, or "cpu:gloo,vkml:vkml"

`VkmlProcessGroup` is a Python `ProcessGroup`: PyTorch's C++ callers (DDP's reducer, broadcast of
module states, parameter verification) reach it through the pybind trampoline, Python callers
(`dist.all_reduce`, FSDP's all-gather/reduce-scatter) through ordinary method lookup. Each
collective downloads its vkml inputs into host tensors, runs the same collective on an inner
Gloo process group, and uploads the results into the vkml tensors in place. The returned Work
wraps a future that completes after the upload is recorded, so `wait()` and `get_future()`
(DDP's bucket hooks) see finished results while Gloo runs on its own threads meanwhile.
CPU tensors go to Gloo unchanged.
"""

from __future__ import annotations

import atexit
import datetime
import threading
import weakref
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (
    AllgatherOptions,
    AllreduceCoalescedOptions,
    AllreduceOptions,
    AllToAllOptions,
    BarrierOptions,
    BroadcastOptions,
    GatherOptions,
    ProcessGroup,
    ReduceOptions,
    ReduceScatterOptions,
    ScatterOptions,
    _create_work_from_future,
)

BACKEND_NAME = "vkml"


def _is_vkml(t: torch.Tensor) -> bool:
    return t.device.type == BACKEND_NAME


class _Staging:
    """Host twins of the vkml tensors of one collective, and which twins go back where."""

    def __init__(self, waiters: set[threading.Thread]) -> None:
        self.waiters = waiters  # the group's threads waiting on Works that have no future
        self._writeback: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.keepalive: list[torch.Tensor] = []  # host inputs Gloo reads until it completes

    def inputs(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """Host copies of `tensors` (CPU ones pass through). Several vkml tensors of one dtype
        are packed on the device first, so they cost one host wait instead of one each."""
        out = list(tensors)
        groups: dict[tuple[torch.device, torch.dtype], list[int]] = {}
        for i, t in enumerate(tensors):
            if _is_vkml(t):
                groups.setdefault((t.device, t.dtype), []).append(i)
        for (_, dtype), idx in groups.items():
            if len(idx) == 1 or any(tensors[i].numel() == 0 for i in idx):
                for i in idx:
                    out[i] = torch.empty(tensors[i].shape, dtype=dtype)
                    out[i].copy_(tensors[i])
                continue
            packed = torch.cat([tensors[i].reshape(-1) for i in idx])
            host = torch.empty(packed.shape, dtype=dtype)
            host.copy_(packed)
            offset = 0
            for i in idx:
                n = tensors[i].numel()
                out[i] = host[offset : offset + n].view(tensors[i].shape)
                offset += n
        self.keepalive.extend(out)
        return out

    def inouts(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """Host copies whose final contents are written back into the vkml tensors."""
        host = self.inputs(tensors)
        for t, h in zip(tensors, host, strict=False):
            if h is not t:
                self._writeback.append((t, h))
        return host

    def outputs(
        self, tensors: list[torch.Tensor], shapes: list[tuple[int, ...]] | None = None
    ) -> list[torch.Tensor]:
        """Uninitialised host tensors (of `shapes`, same element counts, if given) for results
        written back into the vkml `tensors`."""
        host = []
        for i, t in enumerate(tensors):
            if _is_vkml(t):
                h = torch.empty(shapes[i] if shapes else t.shape, dtype=t.dtype)
                self._writeback.append((t, h))
                host.append(h)
            else:
                host.append(t)
        return host

    def write_back(self) -> None:
        for dev, host in self._writeback:
            dev.copy_(
                host.view(dev.shape)
            )  # an upload: recorded on the device's stream, returns at once
        self._writeback.clear()
        self.keepalive.clear()


def _inner_future(work: dist.Work) -> torch.futures.Future | None:
    try:
        return work.get_future()
    except RuntimeError:  # Gloo's send/recv and reduce-scatter works have no future
        return None


def _staged_work(inner: dist.Work, staging: _Staging, result: list[torch.Tensor]) -> dist.Work:
    """A Work completing once Gloo is done and the results are uploaded; its future's value is
    `result` (the caller's tensors), which is what DDP's reducer reads back."""

    def finish(_: Any = None) -> list[torch.Tensor]:
        if _ is not None:
            _.value()  # re-raises Gloo's error
        staging.write_back()
        return result

    fut = _inner_future(inner)
    if fut is not None:
        return _create_work_from_future(fut.then(finish))
    done: torch.futures.Future = torch.futures.Future()

    def waiter() -> None:
        try:
            inner.wait()
            done.set_result(finish())
        except Exception as e:  # noqa: BLE001  (handed to whoever waits)
            done.set_exception(e)

    thread = threading.Thread(target=waiter, name="vkml-dist-wait", daemon=True)
    # A waiter stays in the set until it has truly ended (a thread removing itself is still alive
    # for a moment after, which destroy would miss); finished ones are pruned as new ones start.
    for other in list(staging.waiters):  # a snapshot: other threads may add meanwhile
        if not other.is_alive():
            staging.waiters.discard(other)
    staging.waiters.add(thread)
    thread.start()
    return _create_work_from_future(done)


class _SourceRankWork(dist.Work):
    """recv from any source: wait() also reports which rank sent (Gloo's work knows)."""

    def __init__(self, inner: dist.Work, staging: _Staging) -> None:
        super().__init__()
        self._inner = inner
        self._staging = staging
        self._lock = threading.Lock()
        self._done = False

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        self._inner.wait() if timeout is None else self._inner.wait(timeout)
        with self._lock:
            if not self._done:
                self._staging.write_back()
                self._done = True
        return True

    def is_completed(self) -> bool:
        return self._done

    def _source_rank(self) -> int:
        return self._inner._source_rank()

    def source_rank(self) -> int:
        return self._inner._source_rank()


class VkmlProcessGroup(ProcessGroup):
    """Process group for vkml (and CPU) tensors over Gloo; see the module docstring."""

    def __init__(
        self, store: dist.Store, rank: int, size: int, timeout: datetime.timedelta
    ) -> None:
        super().__init__(rank, size)
        gloo = dist.ProcessGroupGloo(dist.PrefixStore("gloo/", store), rank, size, timeout)
        # A plain C++ ProcessGroup around Gloo: its dispatcher-level ops (coalesced all-gather,
        # reduce-scatter of single tensors) exist even where the Gloo binding lacks a method.
        inner = ProcessGroup(store, rank, size)
        inner._set_default_backend(ProcessGroup.BackendType.GLOO)
        inner._register_backend(torch.device("cpu"), ProcessGroup.BackendType.GLOO, gloo)
        self._inner: ProcessGroup | None = inner  # holds the only references to Gloo
        self._waiters: set[threading.Thread] = set()
        self._group_name = ""
        self._group_desc = ""
        _live_groups.add(self)

    # ---- identity ---------------------------------------------------------------------------
    def getBackendName(self) -> str:  # noqa: N802  (the C++ virtual's name)
        return BACKEND_NAME

    def name(self) -> str:
        return BACKEND_NAME

    def _get_backend_name(self) -> str:
        return BACKEND_NAME

    # Gloo wants the gathered/scattered side of single-tensor collectives to be the other side's
    # shape concatenated along dim 0; NCCL takes any layout of the same size (flat, stacked).
    def _gathered_shape(self, output: torch.Tensor, input: torch.Tensor) -> tuple[int, ...]:
        if output.numel() != self.size() * input.numel() or input.dim() == 0:
            return tuple(output.shape)  # let Gloo report the mismatch
        return (self.size() * input.shape[0], *input.shape[1:])

    def _scattered_view(self, host_in: torch.Tensor, output: torch.Tensor) -> torch.Tensor:
        if (
            host_in.numel() != self.size() * output.numel()
            or output.dim() == 0
            or not host_in.is_contiguous()
        ):
            return host_in
        return host_in.view(self.size() * output.shape[0], *output.shape[1:])

    # ---- reductions -------------------------------------------------------------------------
    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        tensors = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        if opts is None:
            opts = AllreduceOptions()
        elif not isinstance(opts, AllreduceOptions):  # allreduce(tensors, ReduceOp)
            op, opts = opts, AllreduceOptions()
            opts.reduceOp = op
        s = _Staging(self._waiters)
        return _staged_work(self._gloo.allreduce(s.inouts(tensors), opts), s, tensors)

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        s = _Staging(self._waiters)
        work = self._gloo.allreduce_coalesced(
            s.inouts(tensors), opts or AllreduceCoalescedOptions()
        )
        return _staged_work(work, s, tensors)

    def reduce(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        opts = opts or ReduceOptions()
        s = _Staging(self._waiters)
        if self.rank() == opts.rootRank:
            host = s.inouts(tensors)
        else:  # Gloo uses non-root tensors as scratch; the caller's must stay as they were
            host = [
                h.clone() if h is t else h for h, t in zip(s.inputs(tensors), tensors, strict=False)
            ]
        return _staged_work(self._gloo.reduce(host, opts), s, tensors)

    def reduce_scatter(
        self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        host_in = [s.inputs(lst) for lst in inputs]
        work = self._gloo.reduce_scatter(
            s.outputs(outputs), host_in, opts or ReduceScatterOptions()
        )
        return _staged_work(work, s, outputs)

    def reduce_scatter_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        (host_out,) = s.outputs([output])
        host_in = self._scattered_view(s.inputs([input])[0], output)
        work = self._gloo._reduce_scatter_base(host_out, host_in, opts or ReduceScatterOptions())
        return _staged_work(work, s, [output])

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        host_in = [
            self._scattered_view(h, o) for h, o in zip(s.inputs(inputs), outputs, strict=False)
        ]
        work = self._gloo.reduce_scatter_tensor_coalesced(
            s.outputs(outputs), host_in, opts or ReduceScatterOptions()
        )
        return _staged_work(work, s, outputs)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    # ---- gathers and broadcasts -------------------------------------------------------------
    def broadcast(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        tensors = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        if opts is None:
            opts = BroadcastOptions()
        elif isinstance(opts, int):  # broadcast(tensor, root)
            root, opts = opts, BroadcastOptions()
            opts.rootRank = root
        s = _Staging(self._waiters)
        if self.rank() == opts.rootRank:  # the root's tensors do not change: no write-back
            host = s.inputs(tensors)
        else:
            host = s.outputs(tensors)
        return _staged_work(self._gloo.broadcast(host, opts), s, tensors)

    def allgather(
        self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        host_out = [s.outputs(lst) for lst in outputs]
        work = self._gloo.allgather(host_out, s.inputs(inputs), opts or AllgatherOptions())
        return _staged_work(work, s, [t for lst in outputs for t in lst])

    def allgather_coalesced(
        self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        host_out = [s.outputs(lst) for lst in outputs]
        work = self._gloo.allgather_coalesced(
            host_out, s.inputs(inputs), opts or AllgatherOptions()
        )
        return _staged_work(work, s, [t for lst in outputs for t in lst])

    def all_gather_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        (host_in,) = s.inputs([input])
        (host_out,) = s.outputs([output], [self._gathered_shape(output, input)])
        work = self._gloo._allgather_base(host_out, host_in, opts or AllgatherOptions())
        return _staged_work(work, s, [output])

    _allgather_base = all_gather_single

    def all_gather_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        shapes = [self._gathered_shape(o, i) for o, i in zip(outputs, inputs, strict=False)]
        work = self._gloo.allgather_into_tensor_coalesced(
            s.outputs(outputs, shapes), s.inputs(inputs), opts or AllgatherOptions()
        )
        return _staged_work(work, s, outputs)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def gather(
        self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        host_out = [s.outputs(lst) for lst in outputs]
        work = self._gloo.gather(host_out, s.inputs(inputs), opts or GatherOptions())
        return _staged_work(work, s, [t for lst in outputs for t in lst])

    def scatter(
        self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]], opts: Any = None
    ) -> dist.Work:
        s = _Staging(self._waiters)
        host_in = [s.inputs(lst) for lst in inputs]
        work = self._gloo.scatter(s.outputs(outputs), host_in, opts or ScatterOptions())
        return _staged_work(work, s, outputs)

    # ---- all-to-all ---------------------------------------------------------------------------
    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int] | None,
        input_split_sizes: list[int] | None,
        opts: Any = None,
    ) -> dist.Work:
        s = _Staging(self._waiters)
        (host_out,), (host_in,) = s.outputs([output]), s.inputs([input])
        work = self._gloo.alltoall_base(
            host_out,
            host_in,
            list(output_split_sizes or []),
            list(input_split_sizes or []),
            opts or AllToAllOptions(),
        )
        return _staged_work(work, s, [output])

    alltoall_base = all_to_all_single

    def alltoall(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        # As one flat all_to_all_single: Gloo (torch 2.11) has no list form of alltoall.
        s = _Staging(self._waiters)
        flat_in = torch.cat([t.reshape(-1) for t in s.inputs(inputs)])
        flat_out = torch.empty(sum(t.numel() for t in outputs), dtype=flat_in.dtype)
        offset = 0
        for t in outputs:
            s._writeback.append((t, flat_out[offset : offset + t.numel()]))
            offset += t.numel()
        s.keepalive.append(flat_in)
        work = self._gloo.alltoall_base(
            flat_out,
            flat_in,
            [t.numel() for t in outputs],
            [t.numel() for t in inputs],
            opts or AllToAllOptions(),
        )
        return _staged_work(work, s, outputs)

    # ---- point to point and barrier -----------------------------------------------------------
    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> dist.Work:
        s = _Staging(self._waiters)
        return _staged_work(self._gloo.send(s.inputs(tensors), dst, tag), s, tensors)

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> dist.Work:
        s = _Staging(self._waiters)
        return _staged_work(self._gloo.recv(s.outputs(tensors), src, tag), s, tensors)

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int = 0) -> dist.Work:
        s = _Staging(self._waiters)
        return _SourceRankWork(self._gloo.recv_anysource(s.outputs(tensors), tag), s)

    def barrier(self, opts: Any = None) -> dist.Work:
        b = BarrierOptions()
        if opts is not None:
            b.timeout = opts.timeout
        b.device = torch.device("cpu")  # Gloo's barrier needs no tensor on our device
        return self._gloo.barrier(b)

    # ---- bookkeeping the C++ side asks for -----------------------------------------------------
    # The C++ ProcessGroup keeps its name in its backends; this one has its own (the trampoline
    # calls these by their C++ names).
    def getGroupName(self) -> str:  # noqa: N802
        return self._group_name

    def setGroupName(self, name: str) -> None:  # noqa: N802
        self._group_name = name
        self._gloo._set_group_name(name)

    def getGroupDesc(self) -> str:  # noqa: N802
        return self._group_desc

    def setGroupDesc(self, desc: str) -> None:  # noqa: N802
        self._group_desc = desc
        self._gloo._set_group_desc(desc)

    @property
    def _gloo(self) -> ProcessGroup:
        if self._inner is None:
            raise RuntimeError("vkml process group: used after destroy_process_group()")
        return self._inner

    def shutdown(self) -> None:
        self._release_gloo(ProcessGroup.shutdown)

    def abort(self) -> None:
        self._release_gloo(ProcessGroup.abort)

    def _release_gloo(self, stop: Any) -> None:
        """Stops Gloo and drops it, so that its destructor joins its worker threads now. A worker
        still letting go of a Python callback (a Work's `then`) once the interpreter finalises is
        ended by Python inside a noexcept frame, which aborted 1 exit in ~30 on a 2-core machine
        ("terminate called without an active exception")."""
        inner, self._inner = self._inner, None
        if inner is not None:
            stop(inner)
            del inner  # the last reference: ProcessGroupGloo's destructor (GIL released) joins
        # Gloo's destructor has finished every Work, so the threads waiting on those without a
        # future (send, recv, reduce-scatter) are about to end: join them for the same reason.
        for thread in list(self._waiters):
            thread.join()


@atexit.register
def _release_live_groups() -> None:
    """destroy_process_group() for groups a script never destroyed, before finalisation starts."""
    for group in list(_live_groups):
        group._release_gloo(ProcessGroup.shutdown)


_live_groups: weakref.WeakSet[VkmlProcessGroup] = weakref.WeakSet()


def _create(store: dist.Store, rank: int, size: int, timeout: datetime.timedelta) -> ProcessGroup:
    return VkmlProcessGroup(store, rank, size, timeout)


def register() -> None:
    """Registers the "vkml" backend with torch.distributed (idempotent)."""
    if not dist.is_available() or "VKML" in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND_NAME, _create, devices=["cpu", BACKEND_NAME])


register()

__all__ = ["BACKEND_NAME", "VkmlProcessGroup", "register"]
