"""Pipeline parallelism: consecutive parts of a model on consecutive ranks, as
``torch.distributed.pipelining``. A batch is cut into micro-batches; activations stream forward
from stage to stage and their gradients stream back. Schedules: GPipe (every forward, then
every backward) and 1F1B (after a warm-up each stage alternates one forward and one backward,
so at most ``num_stages`` micro-batches' activations are alive at once).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd import backward as _autograd_backward
from ..ops.movement import cat
from . import distributed_c10d as c10d

__all__ = ["PipelineStage", "ScheduleGPipe", "Schedule1F1B", "Pipe", "split_sequential"]

_HEADER = 10


class PipelineStage:
    """Stage ``stage_index`` of ``num_stages``: this rank's part of the model. Its neighbours
    are the previous and next ranks of the default group."""

    def __init__(self, submodule, stage_index: int, num_stages: int, device=None, group=None):
        impl = c10d._default(group)
        if num_stages > impl.size:
            raise ValueError(f"{num_stages} stages need {num_stages} ranks; the world has "
                             f"{impl.size}")
        if not 0 <= stage_index < num_stages:
            raise ValueError(f"stage_index {stage_index} outside [0, {num_stages})")
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self._impl = impl
        self._rank_offset = impl.rank - stage_index
        self._sends = []

    # -- messages to the neighbours (a header with dtype and shape, then the data) -------------
    def _send(self, arr, stage, tag):
        arr = np.ascontiguousarray(arr)
        head = np.zeros(_HEADER, np.int64)
        head[0], head[1] = ord(arr.dtype.char), arr.ndim
        head[2:2 + arr.ndim] = arr.shape
        dst = stage + self._rank_offset
        self._sends.append((self._impl.send(head, dst, tag, meta=True), head))
        self._sends.append((self._impl.send(arr, dst, tag), arr))

    def _recv(self, stage, tag):
        impl, src = self._impl, stage + self._rank_offset
        head = np.empty(_HEADER, np.int64)
        impl.wait(impl.recv(head, src, tag, meta=True), f"pipeline stage {self.stage_index}")
        arr = np.empty(tuple(int(s) for s in head[2:2 + head[1]]), np.dtype(chr(head[0])))
        impl.wait(impl.recv(arr, src, tag), f"pipeline stage {self.stage_index}")
        return arr

    def _finish_sends(self):
        self._impl.waitall([r for r, _ in self._sends], "pipeline send")
        self._sends = []

    # -- one micro-batch ----------------------------------------------------------------------
    def forward_one(self, mb: int, x, target, loss_fn, scale: float):
        if not self.is_first:
            x = wrap(self._recv(self.stage_index - 1, 2 * mb), False, None).requires_grad_()
        out = self.submod(x)
        if self.is_last:
            loss = loss_fn(out, target) if loss_fn is not None else None
            return x, out, loss
        self._send(out._data, self.stage_index + 1, 2 * mb)
        return x, out, None

    def backward_one(self, mb: int, saved, scale: float):
        x, out, loss = saved
        if self.is_last:
            if loss is None:
                raise RuntimeError("the last pipeline stage needs a loss_fn to run backward")
            (loss * scale).backward()
        else:
            grad = wrap(self._recv(self.stage_index + 1, 2 * mb + 1), False, None)
            _autograd_backward(out, grad)
        if not self.is_first:
            g = x.grad._data if x.grad is not None else np.zeros_like(x._data)
            self._send(g, self.stage_index - 1, 2 * mb + 1)


class _Schedule:
    def __init__(self, stage: PipelineStage, n_microbatches: int, loss_fn=None,
                 scale_grads: bool = True):
        if n_microbatches < 1:
            raise ValueError("n_microbatches must be at least 1")
        self._stage = stage
        self._n = n_microbatches
        self._loss_fn = loss_fn
        self.scale_grads = scale_grads

    def _chunks(self, t):
        if t is None:
            return [None] * self._n
        if isinstance(t, Tensor):
            # As torch.tensor_split: the first (batch % n) micro-batches get one more sample.
            bounds = np.cumsum([0] + [len(a) for a in np.array_split(np.arange(t.shape[0]),
                                                                      self._n)])
            parts = [t[int(a):int(b)] for a, b in zip(bounds[:-1], bounds[1:])]
        else:
            parts = list(t)
        if len(parts) != self._n or any(p.shape[0] == 0 for p in parts):
            raise ValueError(f"cannot split a batch of {t.shape[0]} into {self._n} "
                             "micro-batches")
        return parts

    def step(self, *args, target=None, losses=None, **kwargs):
        """Runs forward and backward of every micro-batch. The first stage passes the batch,
        the last the target; returns the last stage's output (None on the others) and appends
        each micro-batch's loss to ``losses`` there."""
        stage = self._stage
        xs = self._chunks(args[0] if args and stage.is_first else None)
        ts = self._chunks(target if stage.is_last else None)
        scale = 1.0 / self._n if self.scale_grads else 1.0
        saved = {}
        outs = []
        for kind, mb in self._order():
            if kind == "F":
                saved[mb] = stage.forward_one(mb, xs[mb], ts[mb], self._loss_fn, scale)
                if stage.is_last:
                    outs.append(saved[mb][1].detach())
                    if losses is not None and saved[mb][2] is not None:
                        losses.append(saved[mb][2].detach())
            else:
                stage.backward_one(mb, saved.pop(mb), scale)
        stage._finish_sends()
        return cat(outs) if stage.is_last else None

    def _order(self):
        raise NotImplementedError


class ScheduleGPipe(_Schedule):
    """Every micro-batch's forward, then every backward."""

    def _order(self):
        return [("F", m) for m in range(self._n)] + [("B", m) for m in range(self._n)]


class Schedule1F1B(_Schedule):
    """One forward, one backward: stage s runs ``num_stages - s - 1`` warm-up forwards, then
    alternates, then drains the backwards."""

    def _order(self):
        st = self._stage
        warm = min(st.num_stages - st.stage_index - 1, self._n)
        order = [("F", m) for m in range(warm)]
        for m in range(self._n - warm):
            order += [("F", warm + m), ("B", m)]
        order += [("B", m) for m in range(self._n - warm, self._n)]
        return order


def split_sequential(model, num_stages: int, balance=None):
    """The ``num_stages`` consecutive parts of a Sequential (``balance`` gives each part's
    number of layers; by default the layers are spread evenly)."""
    from ..nn.modules.container import Sequential

    layers = list(model.children()) if isinstance(model, Sequential) else list(model)
    if balance is None:
        bounds = np.cumsum([0] + [len(a) for a in np.array_split(np.arange(len(layers)),
                                                                  num_stages)])
    else:
        if len(balance) != num_stages or sum(balance) != len(layers):
            raise ValueError(f"balance {list(balance)} must have {num_stages} entries summing "
                             f"to the model's {len(layers)} layers")
        bounds = np.cumsum([0, *balance])
    if any(bounds[i] == bounds[i + 1] for i in range(num_stages)):
        raise ValueError(f"cannot split {len(layers)} layers into {num_stages} non-empty stages")
    return [Sequential(*layers[bounds[i]:bounds[i + 1]]) for i in range(num_stages)]


class Pipe:
    """A Sequential split over every rank of the default group: rank r keeps part r.

    ``step(x, target)`` trains on one batch cut into ``chunks`` micro-batches and returns the
    mean loss on the last rank (None on the others); ``parameters()`` are this rank's, for its
    optimizer. ``schedule`` is "gpipe" or "1f1b".
    """

    def __init__(self, model, chunks: int = 1, loss_fn=None, balance=None,
                 schedule: str = "gpipe", group=None):
        impl = c10d._default(group)
        parts = split_sequential(model, impl.size, balance)
        self.module = parts[impl.rank]
        self.stage = PipelineStage(self.module, impl.rank, impl.size, group=group)
        kinds = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}
        if schedule.lower() not in kinds:
            raise ValueError(f"schedule must be 'gpipe' or '1f1b', got {schedule!r}")
        self.schedule = kinds[schedule.lower()](self.stage, chunks, loss_fn)
        self.chunks = chunks

    def parameters(self):
        return self.module.parameters()

    def step(self, x=None, target=None):
        losses = []
        self.schedule.step(*(() if x is None else (x,)), target=target, losses=losses)
        if not self.stage.is_last:
            return None
        total = losses[0]
        for loss in losses[1:]:
            total = total + loss
        return total / len(losses)
