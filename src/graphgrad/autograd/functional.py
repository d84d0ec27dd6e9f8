"""Higher-order functional API, as ``torch.autograd.functional``: vjp, jvp, jacobian, hessian,
hvp, vhp.

Each function calls ``func`` on new Tensor objects made from ``inputs`` (so derivatives are taken
w.r.t. what ``func`` receives, never w.r.t. a tensor it closes over) and differentiates with
``autograd.grad``. Results are detached unless ``create_graph=True``; parts that do not depend
on an input are zeros, or an error with ``strict=True``. A Tensor argument gives a Tensor
result, a tuple gives a tuple, level by level, as in torch.

>>> import graphgrad as torch
>>> from graphgrad.autograd.functional import hessian, jacobian, jvp
>>> x = torch.tensor([1.0, 2.0])
>>> jacobian(lambda a: a ** 2, x)
tensor([[2., 0.],
        [0., 4.]])
>>> hessian(lambda a: (a ** 3).sum(), x)
tensor([[ 6.,  0.],
        [ 0., 12.]])
>>> jvp(lambda a: a.exp(), torch.tensor(0.0))
(tensor(1.), tensor(1.))
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.creation import zeros_like
from ..ops.movement import stack
from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_OUTPUTS = "outputs of the user-provided function"
_STRATEGIES = ("forward-mode", "reverse-mode")

# Messages for a gradient that is missing (None) or constant while create_graph=True, for each
# backward pass these functions run; {i} is the position of the tensor it belongs to.
_JAC_CONST = ("The jacobian of the user-provided function is independent of input {i}. This is "
              "not allowed in strict mode when create_graph=True.")
_HESS_CONST = ("The hessian of the user-provided function is independent of input {i}. This is "
               "not allowed in strict mode when create_graph=True.")
_BACK = ("The output of the user-provided function is independent of input {i}. This is not "
         "allowed in strict mode.", _JAC_CONST)
_BACK_TRICK = ("The gradient with respect to the input is independent of entry {i} in the "
               "grad_outputs when using the double backward trick to compute forward mode "
               "gradients. This is not allowed in strict mode.", _JAC_CONST)
_DOUBLE_BACK = ("The jacobian of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode.", _HESS_CONST)
_DOUBLE_BACK_TRICK = ("The hessian of the user-provided function is independent of entry {i} in "
                      "the grad_jacobian. This is not allowed in strict mode as it prevents from "
                      "using the double backward trick to replace forward mode AD.", _HESS_CONST)


def _as_tensors(value, what, fn_name):
    """``(was_tuple, tensors)``: ``value`` as a tuple of Tensors, with torch's TypeError."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if was_tuple else f"the given {what}"
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(item)}.")
    return was_tuple, items


def _unpack(res, was_tuple):
    return res if was_tuple else res[0]


def _unpack_nested(res, outer_tuple, inner_tuple):
    """A (per output, per input) tuple of tuples, with the levels that were not tuples removed."""
    if not inner_tuple:
        res = tuple(row[0] for row in res)
    return _unpack(res, outer_tuple)


def _fresh(tensors, create_graph, need_graph):
    """New Tensor objects for ``tensors``.

    With ``create_graph``, one that requires grad stays connected through a view, so that the
    results can be differentiated w.r.t. the caller's tensor; otherwise it is detached (and
    made a leaf that requires grad when this pass needs a graph from it).
    """
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _release(res, create_graph):
    """Results cut from the graph unless the caller asked to keep it."""
    if create_graph:
        return res
    if isinstance(res, tuple):
        return tuple(_release(r, False) for r in res)
    return res.detach()


def _prepare_v(v, refs, refs_tuple, create_graph, fn_name, none_message):
    """``v`` as a tuple matching ``refs`` in length and shapes, checked with torch's errors."""
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tensors(v, "v", fn_name)
    v = _fresh(v, create_graph, need_graph=False)
    if len(v) != len(refs):
        if refs_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(refs)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (t, ref) in enumerate(zip(v, refs)):
        if t.shape != ref.shape:
            prefix = f"Entry {i} in " if refs_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {ref.size()} but got {t.size()}.")
    return v


def _v_for_inputs(v, inputs, inputs_tuple, create_graph, fn_name):
    return _prepare_v(v, inputs, inputs_tuple, create_graph, fn_name,
                      "The vector v can only be None if the input to the user-provided function "
                      "is a single Tensor with a single element.")


def _check_outputs(outputs, strict):
    if not strict:
        return
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode.")


def _check_gradient(jac, strict):
    """Strict mode for the gradient of a scalar function that is about to be differentiated
    again: it must reach every input and still depend on the inputs."""
    if not strict:
        return
    for i, g in enumerate(jac):
        if g is None:
            raise RuntimeError(_BACK[0].format(i=i))
        if not g.requires_grad:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` from the outputs that are in a graph; None for an input none reaches.

    Outputs that are None or need no grad carry no gradient, so they are dropped (with their
    grad_outputs) rather than rejected; with none left, the engine is not called at all.
    """
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gos = zip(*pairs)
    return _grad(outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
                 allow_unused=True)


def _zeros_for_missing(grads, refs, strict, create_graph, messages):
    """Zeros shaped like ``refs`` where a gradient is None; the strict-mode errors instead."""
    missing, constant = messages
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(missing.format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(constant.format(i=i))
        res.append(g)
    return tuple(res)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> torch.autograd.functional.vjp(lambda a: a * a, x, torch.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tensors(func(*inputs), _OUTPUTS, "vjp")
        _check_outputs(outputs, strict)
        v = _prepare_v(v, outputs, outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a "
                       "single Tensor with a single element.")
        res = _grads(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, _BACK)
    return (_unpack(_release(outputs, create_graph), outputs_tuple),
            _unpack(_release(res, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product of ``func`` at ``inputs``.

    graphgrad has reverse mode only, so this is the double-backward trick, as in torch: the vjp
    ``u -> u^T J`` is linear in a dummy cotangent ``u``, and differentiating it w.r.t. ``u``
    along ``v`` gives ``J v``.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> torch.autograd.functional.jvp(lambda a: a * a, x, torch.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _v_for_inputs(v, inputs, inputs_tuple, create_graph, "jvp")
        outputs_tuple, outputs = _as_tensors(func(*inputs), _OUTPUTS, "jvp")
        _check_outputs(outputs, strict)
        # The vjp is linear in the cotangent, so its value never reaches the result; zeros
        # (not ones) cannot bring an inf or nan into the double-backward graph.
        cotangents = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        vjps = _grads(outputs, inputs, cotangents, create_graph=True)
        if strict:
            for i, g in enumerate(vjps):
                if g is None:
                    raise RuntimeError(_BACK[0].format(i=i))
        res = _grads(vjps, cotangents, v, create_graph=create_graph)
        res = _zeros_for_missing(res, outputs, strict, create_graph, _BACK_TRICK)
    return (_unpack(_release(outputs, create_graph), outputs_tuple),
            _unpack(_release(res, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, one backward pass per output element.

    Entry ``[i][j]`` (for tuples of outputs and inputs) has shape
    ``outputs[i].shape + inputs[j].shape``. ``vectorize=True`` gives the same result from the same
    loop (graphgrad has no batched backward); so does ``strategy="forward-mode"`` (with
    ``vectorize=True``, as torch requires), as graphgrad has no forward-mode AD.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> torch.autograd.functional.jacobian(lambda a, b: a * b, (x, x))
    (tensor([[1., 0.],
            [0., 2.]]), tensor([[1., 0.],
            [0., 2.]]))
    """
    if strategy not in _STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError(
            'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
            'mode"` are not supported together (yet). Please either set `create_graph=False` or '
            '`strategy="reverse-mode"`.')
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "jacobian")
        if strategy == "forward-mode":
            if not vectorize:
                raise NotImplementedError(
                    "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                    "only implemented for `vectorize=True`.")  # torch's wording, missing space
            # no forward-mode AD here: the reverse-mode loop below gives the same Jacobian
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tensors(func(*inputs), _OUTPUTS, "jacobian")
        _check_outputs(outputs, strict)
        if strict and vectorize:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`.")
        rows = [_jacobian_rows(i, out, inputs, create_graph, strict)
                for i, out in enumerate(outputs)]
        blocks = (_joint_blocks(rows, outputs, inputs) if vectorize else
                  tuple(tuple(_block(col, out, inp) for col, inp in zip(cols, inputs))
                        for cols, out in zip(rows, outputs)))
    return _unpack_nested(_release(blocks, create_graph), outputs_tuple, inputs_tuple)


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """For output ``i`` and each input, the gradients of the output's elements, in order."""
    flat = out.reshape(-1)
    columns = tuple([] for _ in inputs)
    for k in range(flat.numel()):
        # The graph of ``out`` is walked once per element, so it is kept until the last.
        grads = _grads((flat[k],), inputs, create_graph=create_graph, retain_graph=True)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input {j}. "
                        "This is not allowed in strict mode.")
                g = zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                # torch's message names the output's index here, not the input's.
                raise RuntimeError(_JAC_CONST.format(i=i))
            columns[j].append(g)
    return columns


def _block(rows, out, inp):
    return stack(rows, 0).reshape(tuple(out.shape) + tuple(inp.shape))


def _joint_blocks(rows, outputs, inputs):
    """The blocks as torch's vectorized path makes them: one Jacobian per input over all output
    elements, split by output. graphgrad has no batched backward, so the rows are the same
    ones; the split is kept because it is observable: with create_graph, every block of an
    input has a graph when any of them has."""
    sizes = [out.numel() for out in outputs]
    per_input = [stack([g for cols in rows for g in cols[j]], 0).split(sizes, 0)
                 for j in range(len(inputs))]
    return tuple(tuple(per_input[j][i].reshape(tuple(out.shape) + tuple(inp.shape))
                       for j, inp in enumerate(inputs))
                 for i, out in enumerate(outputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``: the Jacobian of its gradient.

    For a tuple of inputs, entry ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.

    >>> import graphgrad as torch
    >>> torch.autograd.functional.hessian(lambda a, b: (a * b).sum(), (torch.ones(1),) * 2)
    ((tensor([[0.]]), tensor([[1.]])), (tensor([[1.]]), tensor([[0.]])))
    """
    inputs_tuple, inputs = _as_tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*args):
        out = func(*args)
        out_tuple, outs = _as_tensors(out, _OUTPUTS, "hessian")
        _check_outputs(outs, strict)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element")
        return out.squeeze()

    def gradient(*args):
        # Always with a graph: the outer jacobian differentiates it again.
        jac = jacobian(scalar, args, create_graph=True)
        _check_gradient(jac, strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack_nested(res, inputs_tuple, inputs_tuple)


def _scalar_and_gradient(func, inputs, v, create_graph, strict, fn_name):
    """Shared start of hvp and vhp: checked inputs and v, ``func``'s scalar output and its
    gradient (with a graph, to be differentiated again)."""
    inputs_tuple, inputs = _as_tensors(inputs, "inputs", fn_name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _v_for_inputs(v, inputs, inputs_tuple, create_graph, fn_name)
    out = func(*inputs)
    out_tuple, outs = _as_tensors(out, _OUTPUTS, fn_name)
    _check_outputs(outs, strict)
    if out_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element")
    jac = _grads(outs, inputs, create_graph=True)
    _check_gradient(jac, strict)
    return inputs_tuple, inputs, v, out, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: a vector-Hessian product of the scalar function ``func``.

    >>> import graphgrad as torch
    >>> torch.autograd.functional.vhp(lambda a: (a ** 3).sum(), torch.ones(2), torch.ones(2))
    (tensor(2.), tensor([6., 6.]))
    """
    with enable_grad():
        inputs_tuple, inputs, v, out, jac = _scalar_and_gradient(
            func, inputs, v, create_graph, strict, "vhp")
        res = _grads(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, _DOUBLE_BACK)
    return _release(out, create_graph), _unpack(_release(res, create_graph), inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)``: a Hessian-vector product of the scalar function ``func``.

    As in torch, by the double-backward trick (see :func:`jvp`) applied to the gradient, so it
    does not rely on the Hessian being symmetric.

    >>> import graphgrad as torch
    >>> torch.autograd.functional.hvp(lambda a: (a ** 3).sum(), torch.ones(2), torch.ones(2))
    (tensor(2.), tensor([6., 6.]))
    """
    with enable_grad():
        inputs_tuple, inputs, v, out, jac = _scalar_and_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        cotangents = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        vhps = _grads(jac, inputs, cotangents, create_graph=True)
        res = _grads(vhps, cotangents, v, create_graph=create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, _DOUBLE_BACK_TRICK)
    return _release(out, create_graph), _unpack(_release(res, create_graph), inputs_tuple)
