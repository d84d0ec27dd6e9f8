"""``torch.func.functionalize``, ``linearize`` and ``replace_all_batch_norm_modules_``.

graphgrad's transforms run eagerly on the tape, where mutation is already safe, so
``functionalize`` returns a function computing the same results; ``linearize`` is ``jvp`` at
fixed primals.
"""

from __future__ import annotations

import functools

from .jvp import jvp


def functionalize(func, *, remove="mutations"):
    """``func`` itself, wrapped: the eager tape handles in-place ops, so removing them changes
    no result."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are:\n     remove='mutations': "
                           "all inplace and out= operators will be removed from the program, "
                           "and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all "
                           "aliasing operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def call(*args, **kwargs):
        return func(*args, **kwargs)

    return call


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``."""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def replace_all_batch_norm_modules_(root):
    """In place: every batch-norm module under ``root`` stops tracking running statistics
    (``running_mean``/``running_var`` None), so it normalises with batch statistics, as torch's
    helper for vmap."""
    from ..nn.modules.batchnorm import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
