"""Gradient edge semantics a training loop meets: non-scalar backward with a gradient, retain_grad
on intermediates, freezing parameters, saved_tensors_hooks, register_multi_grad_hook,
set_materialize_grads, .data versus detach, and the subgradients torch picks at ties and kinks
(max/min ties, abs/relu/clamp at the kink, norm at zero, where with a NaN branch, repeated
indices)."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


def err(f):
    try:
        f()
        print("no error")
    except Exception as e:
        # graphgrad's typed errors subclass the builtin torch raises; print that one
        kind = next(c for c in type(e).__mro__ if c.__module__ == "builtins").__name__
        print(kind, str(e).split("\n")[0].split(". ")[0].rstrip("."))


def grad_of(f, x):
    x = x.detach().clone().requires_grad_()
    f(x).sum().backward()
    return x.grad


rng = np.random.default_rng(5)
x = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
y = x * x
y.retain_grad()
z = y.sin()
z.backward(torch.ones_like(z) * 0.5)
N("nonscalar", x.grad, y.grad)
print(y.is_leaf, y.retains_grad, z.retains_grad, z.grad)
# ties and kinks
t = torch.tensor([1.0, 3.0, 3.0, -2.0, 0.0])
N("max all", grad_of(lambda v: v.max(), t))
N("max dim", grad_of(lambda v: v.view(1, 5).max(dim=1).values, t))
N("amax", grad_of(lambda v: v.amax(), t))
N("min/amin", grad_of(lambda v: v.min() + v.amin(), t))
N("abs relu", grad_of(lambda v: v.abs() + v.relu(), t))
N("clamp", grad_of(lambda v: v.clamp(0.0, 3.0), t))
N("sign round", grad_of(lambda v: v.sign() + v.round(), t))
N("maximum tie", grad_of(lambda v: torch.maximum(v, torch.full_like(v, 3.0)), t))
N("norm zero", grad_of(lambda v: v.norm(), torch.zeros(3)))
N("sqrt zero", grad_of(lambda v: v.sqrt(), torch.tensor([0.0, 4.0])))
N("where nan", grad_of(lambda v: torch.where(v > 0, v.log(), torch.zeros_like(v)), t))
N("where safe", grad_of(lambda v: torch.where(v > 0, v.clamp(min=1e-6).log(), v * 0), t))
N("repeat idx", grad_of(lambda v: v[[0, 0, 2, 2, 2]], t))
N("index_add", grad_of(lambda v: torch.zeros(2).index_add(0, torch.tensor([0, 1, 0, 1, 1]), v), t))
N("median", grad_of(lambda v: v.median(), t))
N("sort", grad_of(lambda v: v.sort().values * torch.arange(5.0), t))
N("pow0", grad_of(lambda v: v ** 0, t), grad_of(lambda v: torch.zeros(5) ** v, t))
N("logsumexp inf", grad_of(lambda v: torch.logsumexp(v, 0), torch.tensor([float("-inf"), 0.0])))
# freezing, .data and detach
lin = nn.Linear(3, 2)
lin.load_state_dict({"weight": torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32)),
                     "bias": torch.zeros(2)})
lin.bias.requires_grad_(False)
inp = torch.ones(4, 3)
lin(inp).pow(2).mean().backward()
print(lin.bias.grad, lin.weight.grad.shape,
      [n for n, p in lin.named_parameters() if p.requires_grad])
w_data = lin.weight.data
w_data.mul_(2)
print(lin.weight._version, w_data.requires_grad, lin.weight.requires_grad)
det = lin.weight.detach()
det.zero_()
print(lin.weight.abs().sum().item(), det.is_leaf)
# saved tensor hooks
packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t.clone()


with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 1):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = (a * a).exp().sum()
b.backward()
N("saved hooks", a.grad)
print(len(packed) > 0, packed[0])
# multi grad hook
u = torch.tensor(2.0, requires_grad=True)
v2 = torch.tensor(3.0, requires_grad=True)
fired = []
torch.autograd.graph.register_multi_grad_hook(
    (u, v2), lambda gs: fired.append([None if g is None else round(g.item(), 4) for g in gs]))
(u * v2).backward()
(u * 5).backward()
print(fired)


class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, s):
        ctx.set_materialize_grads(False)
        return s * 2, s * 3

    @staticmethod
    def backward(ctx, g1, g2):
        print("grads None:", g1 is None, g2 is None)
        out = 0
        if g1 is not None:
            out = out + g1 * 2
        if g2 is not None:
            out = out + g2 * 3
        return out


s = torch.tensor([1.0, 2.0], requires_grad=True)
p1, p2 = Split.apply(s)
p1.sum().backward()
N("materialize off", s.grad)
# views modified in place, grad assignment, post-accumulate hooks, scalar conversions
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
b.view(3, 1)[0].add_(1)
print(b.grad_fn.name(), b.grad_fn.next_functions[0][0].name(), b._version)
err(lambda: (a * 1).unbind(0)[0].mul_(2))
err(lambda: (a * 1).chunk(3)[1].add_(1))
err(lambda: (a * 1).expand(2, 3).add_(1))
with torch.no_grad():
    nv = (a * 1)[:2]
err(lambda: nv.mul_(2))
err(lambda: setattr(a, "grad", torch.ones(4)))
err(lambda: setattr(a, "grad", torch.ones(3, dtype=torch.float64)))
post = []
a.register_post_accumulate_grad_hook(lambda q: post.append(q.grad.sum().item()))
(a * 3).sum().backward()
(a * 3).sum().backward()
print(post, a.grad)
err(lambda: float(a))
err(lambda: a.item())
err(lambda: bool(a))
print(float(a[0]), int(a[1]), bool(a[2]), [1, 2, 3][torch.tensor(1)])
