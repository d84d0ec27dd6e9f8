"""``torch.nn.utils.stateless``: call a module with some of its parameters and buffers replaced.

The given tensors are swapped into the modules' ``_parameters`` / ``_buffers`` (or attributes)
for the duration of the call and the originals are put back afterwards, even when the call
raises. ``torch.func.functional_call`` is built on this.
"""

from __future__ import annotations

import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _untie_named_tensors_map(module, parameters_and_buffers: dict) -> dict:
    """Extends the dict so that every name tied to a given name (the same tensor registered
    under several names) gets the given value too."""
    all_named = {}
    all_named.update(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, tensor in all_named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = set(parameters_and_buffers)
    given_tied = {n for n in given if n in tied}
    for name in given_tied:
        names = tied[name]
        values = {id(parameters_and_buffers[n]) for n in names if n in parameters_and_buffers}
        if len(names & given_tied) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _swap_tensor(module, name: str, tensor):
    """Puts ``tensor`` at ``module.<name>`` (``_MISSING`` deletes it) and returns what was
    there, as torch's NamedMemberAccessor.swap_tensor."""
    prefix, _, attr = name.rpartition(".")
    if prefix:
        module = module.get_submodule(prefix)
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for store in (module._parameters, module._buffers):
        if attr in store:
            orig = store[attr]
            if tensor is _MISSING:
                del store[attr]
            else:
                store[attr] = tensor
            return orig
    orig = getattr(module, attr) if hasattr(module, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, attr, tensor)
    elif hasattr(module, attr):
        delattr(module, attr)
    return orig


def _check_keys(module, keys):
    valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    keys = set(keys)
    return sorted(valid - keys), sorted(keys - valid)


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers: dict, tie_weights: bool = False,
                          strict: bool = False):
    untied = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    if strict:
        missing, unexpected = _check_keys(module, untied)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    originals = {}
    try:
        for name, tensor in untied.items():
            originals[name] = _swap_tensor(module, name, tensor)
        yield
    finally:
        # Restored in reverse, so a name swapped twice (tied) ends with its first original.
        for name, orig in reversed(list(originals.items())):
            _swap_tensor(module, name, orig)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights: bool = True, strict: bool = False):
    if type(module).__name__ == "DataParallel":
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Deprecated spelling of ``torch.func.functional_call`` (one dict only)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
