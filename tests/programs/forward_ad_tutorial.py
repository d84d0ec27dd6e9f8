"""The "Forward-mode Automatic Differentiation" tutorial (pytorch/tutorials, forward_ad_usage):
dual tensors, modules with dual parameters (delattr/setattr and functional_call), a custom
Function with jvp checked by gradcheck(check_forward_ad=True), and torch.func.jvp."""

import functools
import sys

import numpy as np

torch = __import__(sys.argv[1])
import importlib  # noqa: E402

fwAD = importlib.import_module(sys.argv[1] + ".autograd.forward_ad")
nn = torch.nn
rng = np.random.default_rng(0)


def randn(*shape, dtype=None):
    t = torch.tensor(rng.standard_normal(shape).astype(np.float32))
    return t if dtype is None else t.to(dtype)


def N(name, t):
    vals = np.asarray(t.detach().numpy()).ravel()[:12].tolist()
    print("~", name, list(t.shape), " ".join(f"{v:.6g}" for v in vals))


# -- basic usage ------------------------------------------------------------------------------
primal = randn(10, 10)
tangent = randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    print("tangent is tangent:", fwAD.unpack_dual(dual_input).tangent is tangent)
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    print("transposed tangent copied:", fwAD.unpack_dual(dual_input_alt).tangent is not tangent)
    plain_tensor = randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)
    jvp = fwAD.unpack_dual(dual_output).tangent
    N("jvp", jvp)
    N("jvp_alt", fwAD.unpack_dual(fn(dual_input_alt, plain_tensor)).tangent)
    print("unpacked type:", type(fwAD.unpack_dual(dual_output)).__name__,
          fwAD.unpack_dual(dual_output)._fields)
    print("plain tangent:", fwAD.unpack_dual(plain_tensor).tangent)
print("after exit:", fwAD.unpack_dual(dual_output).tangent)

# -- modules ----------------------------------------------------------------------------------
torch.manual_seed(0)
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(randn(5, 5))
    model.bias.copy_(randn(5))
input = randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.tensor(rng.random(tuple(p.shape)).astype(np.float32))
            for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent
N("module jvp", jvp)

from importlib import import_module  # noqa: E402

functional_call = import_module(sys.argv[1] + ".func").functional_call
model = nn.Linear(5, 5)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent
print("functional_call agrees:", bool(torch.allclose(jvp, jvp2)))


# -- custom Function --------------------------------------------------------------------------
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


primal = randn(10, 10, dtype=torch.double).requires_grad_(True)
tangent = randn(10, 10)
with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = Fn.apply(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent
N("Fn jvp", jvp)
print("Fn jvp dtype:", jvp.dtype)
print("gradcheck:", torch.autograd.gradcheck(Fn.apply, (primal[:3, :3].detach().requires_grad_(),),
                                             check_forward_ad=True, check_backward_ad=False,
                                             check_undefined_grad=False,
                                             check_batched_grad=False))

# -- functional API (torch.func.jvp in place of functorch) --------------------------------------
primal0, tangent0, primal1, tangent1 = (randn(10, 10) for _ in range(4))
primal_out, tangent_out = torch.func.jvp(fn, (primal0, primal1), (tangent0, tangent1))
N("func.jvp", tangent_out)
y = randn(10, 10)
primal_out, tangent_out = torch.func.jvp(functools.partial(fn, y=y), (primal0,), (tangent0,))
N("func.jvp partial", tangent_out)
with fwAD.dual_level():
    same = fwAD.unpack_dual(fn(fwAD.make_dual(primal0, tangent0), y)).tangent
print("dual and func.jvp agree:", bool(torch.allclose(same, tangent_out)))
