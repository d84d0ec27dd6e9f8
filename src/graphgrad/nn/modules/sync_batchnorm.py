"""``SyncBatchNorm``: batch norm whose batch statistics span every rank of
``graphgrad.distributed``. Without an initialised process group (or in eval) it is exactly
``BatchNorm``, as torch's on CPU. NOTE: torch refuses to sync CPU tensors (its collectives for
this are GPU-only); graphgrad's process groups are CPU/MPI, so here the statistics are
all-reduced through them, and the backward all-reduces their gradients (torch's algorithm).
"""

from __future__ import annotations

from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ...ops.movement import cat
from .. import functional as F
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


class _AllReduceSum(Function):
    """Sums a tensor over the ranks; the gradient of each rank's copy is the sum of the
    incoming gradients over the ranks (every rank's loss depends on the total)."""

    @staticmethod
    def forward(ctx, tensor):
        from ... import distributed as dist

        out = tensor.clone()
        dist.all_reduce(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        from ... import distributed as dist

        grad = grad.clone()
        dist.all_reduce(grad)
        return grad


def _sync_batch_norm(module, input, running_mean, running_var, momentum):
    """Normalises with the mean and biased variance of all ranks' batches; updates the running
    statistics with the unbiased variance of the global batch."""
    c = input.shape[1]
    dims = [0, *range(2, input.dim())]
    local = input.numel() // c
    stats = cat([input.sum(dims), (input * input).sum(dims),
                 input.new_full((1,), float(local))])
    total = _AllReduceSum.apply(stats)
    n = float(total[2 * c].item())
    if n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {list(input.shape)}")
    mean = total[:c] / n
    var = total[c:2 * c] / n - mean * mean
    if running_mean is not None:
        with no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    shape = [1, c] + [1] * (input.dim() - 2)
    out = (input - mean.reshape(shape)) * (var.reshape(shape) + module.eps).rsqrt()
    if module.weight is not None:
        out = out * module.weight.reshape(shape)
    if module.bias is not None:
        out = out + module.bias.reshape(shape)
    return out


class SyncBatchNorm(_BatchNorm):
    """Batch norm over ``(N, C, *)`` input with statistics synchronised across ranks.

    >>> import graphgrad as torch
    >>> bn = torch.nn.SyncBatchNorm(3)
    >>> bn(torch.randn(4, 3, 2)).shape
    torch.Size([4, 3, 2])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        from ... import distributed as dist

        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_buffers else None
        running_var = self.running_var if use_buffers else None
        need_sync = (bn_training and self.training and dist.is_initialized()
                     and dist.get_world_size(self.process_group) > 1)
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, factor, self.eps)
        return _sync_batch_norm(self, input, running_mean, running_var, factor)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Returns ``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` that
        shares its parameters and buffers."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                          module.affine, module.track_running_stats,
                                          process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
