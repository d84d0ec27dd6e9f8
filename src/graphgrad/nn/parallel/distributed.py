"""DistributedDataParallel: one model replica per rank, gradients averaged across ranks.

Construction broadcasts rank 0's parameters and buffers. Parameters are grouped into buckets
(reverse registration order, about when backward produces their gradients; the first bucket
1 MB, the rest ``bucket_cap_mb``). A post-accumulate-grad hook copies each gradient, divided by
the world size, into its bucket; a full bucket starts a non-blocking all-reduce right away, in
bucket order on every rank, so communication overlaps the rest of backward. The hook of the
last gradient waits for all of them; each ``.grad`` is then a view of its bucket.

Note [Fresh buckets]: torch's default (``gradient_as_bucket_view=False``) gives every ``.grad``
storage of its own, which a later iteration never overwrites. Copying the averages back would
cost a pass over every gradient; instead each synchronised iteration reduces into newly
allocated buckets, so a ``.grad`` kept from an earlier step is left alone. With
``gradient_as_bucket_view=True`` the same buckets are reused every step, as in torch.
"""

from __future__ import annotations

import contextlib
import zlib

import numpy as np

from ..._tensor import Tensor, wrap
from ...autograd import sites as _sites
from ...autograd.grad_mode import is_grad_enabled
from ...distributed import distributed_c10d as c10d
from ...distributed import fingerprint as _fingerprint
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES


class _Bucket:
    __slots__ = ("params", "offsets", "buf", "pending", "req")

    def __init__(self, params, dtype):
        self.params = params
        self.offsets = np.cumsum([0] + [p._data.size for p in params])
        self.buf = np.zeros(int(self.offsets[-1]), dtype)
        self.pending = 0
        self.req = None

    def view(self, i):
        p = self.params[i]
        return self.buf[self.offsets[i]:self.offsets[i + 1]].reshape(p._data.shape)


def _tensors_in(obj, out):
    """The tensors in a forward's output (nested tuples, lists, dicts)."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _reached_leaves(outputs) -> set:
    """ids of the leaves whose gradients a backward from ``outputs`` reaches."""
    seen, reached = set(), set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    reached.update(id(t) for t in outputs if t.grad_fn is None and t.requires_grad)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(n for n, _ in node.next_functions)
    return reached


def _cuts(params) -> str:
    """why_no_grad's answer for each parameter, against the last backward's loss."""
    from ...autograd.missing_grad import why_no_grad

    lines = []
    for p in params:
        try:
            report = why_no_grad(p)
        except (ValueError, RuntimeError):  # no backward ran in this thread
            return ""
        if report is not None:
            lines.append(f"  {report}")
    return "\nWhy (graphgrad.autograd.why_no_grad):\n" + "\n".join(lines) if lines else ""


class DistributedDataParallel(Module):
    """Data parallelism over the default process group, as ``torch.nn.parallel.DDP``.

    >>> import graphgrad as torch, graphgrad.distributed as dist
    >>> from graphgrad.nn.parallel import DistributedDataParallel as DDP
    >>> dist.init_process_group("mpi")
    >>> model = DDP(torch.nn.Linear(2, 1))
    >>> model(torch.ones(3, 2)).sum().backward()
    >>> model.module.weight.grad
    tensor([[3., 3.]])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        if device_ids not in (None, [], ["cpu"]) or output_device not in (None, "cpu"):
            raise ValueError("DistributedDataParallel device_ids and output_device arguments "
                             "only work with single-device/multiple-device GPU modules or CPU "
                             "modules, but got device_ids [...], output_device ... (graphgrad "
                             "runs on CPU: leave them None)")
        self._impl = c10d._default(process_group)
        self.module = module
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 2**20)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._name_of = {id(p): n for n, p in named}
        self._fingerprinted = 0  # synchronised forwards checked (the first captures sites)
        self._verify_same_model()
        self._sync_module_states()
        self._build_buckets()
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready)
                         for p in self._params]
        self._reset_iteration(False)

    # -- construction ------------------------------------------------------------------------
    def _verify_same_model(self):
        impl = self._impl
        if impl.size == 1:
            return
        sig = "|".join(f"{tuple(p.shape)}:{p._data.dtype}" for p in self._params)
        mine = np.array([len(self._params), zlib.crc32(sig.encode())], np.int64)
        rows = np.empty((impl.size, 2), np.int64)
        impl.wait(impl.allgather(mine, rows), "DistributedDataParallel construction")
        for r, row in enumerate(rows):
            if row[0] != rows[0][0]:
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {r} has "
                                   f"{row[0]} params, while rank 0 has inconsistent "
                                   f"{rows[0][0]} params.")
            if row[1] != rows[0][1]:
                raise RuntimeError(f"DDP expects same model across all ranks, but rank {r}'s "
                                   "parameter shapes or dtypes differ from rank 0's.")

    def _sync_module_states(self):
        """Broadcasts rank 0's parameters and buffers (``_ddp_params_and_buffers_to_ignore``
        excluded, as in torch)."""
        if self._impl.size == 1:
            return
        ignore = set(getattr(self.module, "_ddp_params_and_buffers_to_ignore", ()))
        tensors = [p for n, p in self.module.named_parameters() if n not in ignore]
        tensors += [b for n, b in self.module.named_buffers() if n not in ignore]
        self._bcast(tensors)

    def _bcast(self, tensors):
        from ...distributed._backend import as_buffer

        impl, reqs, copies = self._impl, [], []
        for t in tensors:
            arr = t._data
            if not arr.flags.c_contiguous:
                copies.append((t, arr := np.ascontiguousarray(arr)))
            reqs.append(impl.bcast(as_buffer(arr), 0))
        impl.waitall(reqs, "DistributedDataParallel broadcast")
        for t, arr in copies:
            np.copyto(t._data, arr)

    def _build_buckets(self):
        buckets, open_ = [], {}
        # NOTE: torch's first bucket is 1 MB whatever the cap; a smaller cap also bounds it.
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            key = p._data.dtype
            cur = open_.setdefault(key, [[], 0])
            cur[0].append(i)
            cur[1] += p._data.nbytes
            if cur[1] >= cap:
                buckets.append((key, cur[0]))
                del open_[key]
                cap = self.bucket_bytes_cap
        buckets.extend((key, cur[0]) for key, cur in open_.items())
        self._buckets = [_Bucket([self._params[i] for i in idx], dtype) for dtype, idx in buckets]
        self._slot = {}
        for b, bucket in enumerate(self._buckets):
            for j, p in enumerate(bucket.params):
                self._slot[id(p)] = (b, j)
        index = {id(p): i for i, p in enumerate(self._params)}
        self._bucket_indices = [[index[id(p)] for p in b.params] for b in self._buckets]

    # -- iteration ------------------------------------------------------------------------
    def _reset_iteration(self, sync):
        self._sync = sync
        self._started = False
        self._next = 0
        self._got = set()
        self._unused = ()
        for b in self._buckets:
            b.pending = len(b.params)
            b.req = None
            if sync and not self.gradient_as_bucket_view:
                # See Note [Fresh buckets].
                b.buf = np.empty_like(b.buf)

    def forward(self, *inputs, **kwargs):
        self._check_prior_reduction()
        sync = self.require_backward_grad_sync and is_grad_enabled()
        if (self.broadcast_buffers and self.require_forward_param_sync and self._impl.size > 1
                and is_grad_enabled()):
            buffers = list(self.module.buffers())
            if buffers:
                self._bcast(buffers)
        check = sync and self._impl.size > 1 and not self.find_unused_parameters
        if check and self._fingerprinted == 0 and not _sites.state.on:
            # The first step records each op's line for the fingerprint's message.
            with _sites.capture_sites(True):
                out = self.module(*inputs, **kwargs)
        else:
            out = self.module(*inputs, **kwargs)
        if check:
            # Note [DDP fingerprint]: ranks about to reduce different parameters raise here,
            # all alike, instead of hanging in backward.
            self._reset_iteration(False)
            self._fingerprinted += 1
            _fingerprint.check(self._impl, _tensors_in(out, []), self._name_of,
                               self._fingerprinted - 1)
        self._reset_iteration(sync)
        if sync and self.find_unused_parameters:
            reached = _reached_leaves(_tensors_in(out, []))
            self._unused = [p for p in self._params if id(p) not in reached]
            for p in self._unused:
                b, j = self._slot[id(p)]
                self._buckets[b].view(j)[...] = 0
                self._buckets[b].pending -= 1
        return out

    def _grad_ready(self, p):
        if not self._sync:
            return
        if self._unused and any(p is q for q in self._unused):
            self._marked_twice(p)
        self._started = True
        b, j = self._slot[id(p)]
        bucket = self._buckets[b]
        view = bucket.view(j)
        np.divide(p._grad._data, self._impl.size, out=view)
        if p._grad._data is not view:
            p._grad = wrap(view, False, None)
        self._got.add(id(p))
        bucket.pending -= 1
        if bucket.pending == 0 and b == self._next:
            self._launch_ready()
        elif self._next and self._buckets[self._next - 1].req is not None:
            # MPI progresses a non-blocking collective only inside MPI calls.
            self._impl.test(self._buckets[self._next - 1].req)

    def _launch_ready(self):
        impl = self._impl
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            bucket = self._buckets[self._next]
            bucket.req = impl.allreduce(bucket.buf, "sum")
            self._next += 1
        if self._next == len(self._buckets):
            self._finalize()

    def _finalize(self):
        impl = self._impl
        impl.waitall([b.req for b in self._buckets], "DistributedDataParallel all-reduce")
        if self._unused:
            # A parameter unused here may be used on another rank: then it gets the average;
            # unused everywhere, its .grad is left as it was, as in torch.
            used = np.array([id(p) in self._got for p in self._params], np.int32)
            impl.wait(impl.allreduce(used, "max"), "DistributedDataParallel all-reduce")
            for p, u in zip(self._params, used):
                if u and p._grad is None:
                    b, j = self._slot[id(p)]
                    p._grad = wrap(self._buckets[b].view(j), False, None)
        self._reset_iteration(False)

    def _marked_twice(self, p):
        """A parameter find_unused_parameters marked ready (its forward output does not reach
        it) got a gradient after all: its bucket would be counted twice."""
        i = next(k for k, q in enumerate(self._params) if q is p)
        self._impl.waitall([b.req for b in self._buckets if b.req is not None])
        self._reset_iteration(False)
        raise RuntimeError(
            "Expected to mark a variable ready only once. This error is caused by one of the "
            "following reasons: 1) Use of a module parameter outside the `forward` function. "
            "2) Reused parameters in multiple reentrant backward passes.\n"
            f"Parameter at index {i} with name {self._names[i]} has been marked as ready twice: "
            "find_unused_parameters=True marked it unused because no output of the forward "
            "reaches it, but the loss used it outside the forward. Use it inside the "
            "module's forward.")

    def _check_prior_reduction(self):
        if not (self._sync and self._started):
            return
        missing = [i for i, p in enumerate(self._params) if id(p) not in self._got
                   and not any(p is q for q in self._unused)]
        self._impl.waitall([b.req for b in self._buckets if b.req is not None])
        self._reset_iteration(False)
        names = ", ".join(self._names[i] for i in missing)
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss. You can enable unused parameter detection by passing the keyword "
            "argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
            "function outputs participate in calculating loss.\nParameter indices which did "
            f"not receive grad for rank {self._impl.rank}: {' '.join(map(str, missing))}\n"
            f"Parameters which did not receive grad for rank {self._impl.rank}: {names}"
            + _cuts(self._params[i] for i in missing))

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, backward accumulates gradients locally without averaging; the
        first backward after it averages the accumulated sum.

        >>> import graphgrad as torch, graphgrad.distributed as dist
        >>> from graphgrad.nn.parallel import DistributedDataParallel as DDP
        >>> dist.init_process_group("mpi")
        >>> ddp = DDP(torch.nn.Linear(2, 1))
        >>> with ddp.no_sync():
        ...     ddp(torch.ones(1, 2)).sum().backward()
        >>> ddp(torch.ones(1, 2)).sum().backward()
        >>> ddp.module.bias.grad
        tensor([2.])
        >>> dist.destroy_process_group()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self) -> dict:
        return {"world_size": self._impl.size, "bucket_sizes": [b.buf.nbytes for b in
                                                                  self._buckets],
                "find_unused_parameters": self.find_unused_parameters}
