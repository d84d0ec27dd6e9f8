"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator (functions and generators), as in
``torch.autograd.grad_mode``. The dispatcher reads ``state.grad_enabled`` on every op.
"""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = [
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled",
]


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _DecoratorContextManager:
    """Base for modes usable as ``with mode():``, ``@mode()`` and bare ``@mode``."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])  # bare @mode on a function
        return super().__new__(cls)

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            # The mode holds only while the generator body runs, not while its caller does.
            with self.clone():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with self.clone():
                        gen.close()
                    raise
                except BaseException as e:
                    with self.clone():
                        response = gen.throw(e)
                else:
                    try:
                        with self.clone():
                            response = gen.send(request)
                    except StopIteration as stop:
                        return stop.value

        return wrapper

    def clone(self):
        return type(self)()


_cuts = None  # autograd/cuts.py, imported on first use (it imports this module's users)


def _load_cuts():
    global _cuts
    from . import cuts

    _cuts = cuts
    return cuts


class no_grad(_DecoratorContextManager):
    """Disables gradient recording.

    >>> import graphgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __enter__(self):
        self._prev = state.grad_enabled
        state.grad_enabled = False
        cuts = _cuts or _load_cuts()
        self._block = cuts.current_block()
        cuts.note_no_grad()  # the block a module call inside it remembers (why_no_grad)

    def __exit__(self, *exc):
        state.grad_enabled = self._prev
        _cuts.set_block(self._block)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording inside ``no_grad``."""

    def __enter__(self):
        self._prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self._prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on call; restores the previous mode when used as a context manager."""

    def __init__(self, mode: bool):
        self._prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.grad_enabled = self._prev

    def clone(self):
        return type(self)(self.mode)

    def __repr__(self):
        # torch's own repr (as torch.return_types are printed under torch's name)
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    def __call__(self, func):
        # Used as a decorator: undo the mode change that __init__ made eagerly.
        state.grad_enabled = self._prev
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors.

    An inference tensor cannot later be saved for backward by an op that records a graph.
    """

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled = False
            state.inference = True
        elif state.inference:  # inference_mode(False) inside inference mode: back to normal
            state.inference = False
            state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self._prev

    def clone(self):
        return type(self)(self.mode)

    def __call__(self, func):
        if isinstance(func, bool):
            return type(self)(func)
        return super().__call__(func)
