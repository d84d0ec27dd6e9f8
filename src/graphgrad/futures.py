"""``graphgrad.futures``: torch.futures' ``Future``, ``collect_all`` and ``wait_all``."""

from __future__ import annotations

from ._jit_extras import Future

__all__ = ["Future", "collect_all", "wait_all"]


def collect_all(futures):
    """A Future, done when every one of ``futures`` is, whose value is the list of them."""
    out = Future()
    pending = [len(futures)]
    if not futures:
        out.set_result([])

    def one_done(_):
        pending[0] -= 1
        if pending[0] == 0:
            out.set_result(list(futures))

    for fut in futures:
        fut.add_done_callback(one_done)
    return out


def wait_all(futures):
    """The values of ``futures``, waiting for each."""
    return [fut.wait() for fut in futures]
