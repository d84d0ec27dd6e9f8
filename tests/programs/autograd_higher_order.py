"""Higher-order gradients (create_graph, grad_outputs, allow_unused, materialize_grads,
is_grads_batched), retain_graph patterns, gradient accumulation across backwards,
zero_grad(set_to_none) and torch.autograd.functional.jacobian/hessian/vjp/jvp/hvp."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
AF = torch.autograd.functional


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
        print(kind, str(e).split("\n")[0].split(". ")[0])


rng = np.random.default_rng(7)
x = torch.tensor(rng.standard_normal(4), dtype=torch.float64, requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g.requires_grad, type(g.grad_fn).__name__ is not None, g.is_leaf)
(gg,) = torch.autograd.grad(g.sum(), x)
N("d2", g, gg)
# third order via repeated create_graph
z = torch.tensor(rng.standard_normal(3), requires_grad=True)
f = (z.sin() * z).sum()
d1 = torch.autograd.grad(f, z, create_graph=True)[0]
d2 = torch.autograd.grad(d1, z, grad_outputs=torch.ones_like(d1), create_graph=True)[0]
d3 = torch.autograd.grad(d2.sum(), z)[0]
N("d1 d2 d3", d1, d2, d3)
# grad_outputs as a vector, multiple inputs, allow_unused, materialize_grads
a = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
b = torch.tensor(rng.standard_normal(3), requires_grad=True)
u = torch.tensor(1.0, requires_grad=True)
out = a * b
v = torch.from_numpy(rng.standard_normal((2, 3)))
ga, gb, gu = torch.autograd.grad(out, (a, b, u), grad_outputs=v.float(), allow_unused=True)
N("ga gb", ga, gb)
print(gu)
err(lambda: torch.autograd.grad((a * b).sum(), (a, u)))
gs = torch.autograd.grad((a * b).sum(), [a, u], allow_unused=True, materialize_grads=True)
print(gs[1], gs[0].shape)
err(lambda: torch.autograd.grad(a * b, a))
# batched grad outputs: rows of the identity give the Jacobian
w = torch.tensor(rng.standard_normal(3), requires_grad=True)
yv = w.exp() * w
(jac,) = torch.autograd.grad(yv, w, torch.eye(3), is_grads_batched=True)
N("batched jac", jac)
# retain_graph
p = torch.tensor([1.0, 2.0], requires_grad=True)
q = (p * p).exp().sum()
q.backward(retain_graph=True)
q.backward()
N("accumulated", p.grad)
err(lambda: q.backward())
err(lambda: torch.autograd.backward([p.sum(), (p * 2).sum()], [None]))
torch.autograd.backward([p.sum(), (p * 2).sum()], [None, None, None])
N("multi-root", p.grad)
p.grad = None
r = p.pow(2).sum()
r.backward(inputs=[p])
N("inputs=", p.grad)
# accumulation into an existing grad keeps the same tensor object
gid = id(p.grad)
(p * 3).sum().backward()
print(id(p.grad) == gid)
N("acc", p.grad)
# zero_grad set_to_none and False
lin = nn.Linear(3, 2)
lin.load_state_dict({"weight": torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32)),
                     "bias": torch.zeros(2)})
lin(torch.ones(1, 3)).sum().backward()
lin.zero_grad(set_to_none=False)
print(lin.weight.grad, lin.bias.grad)
lin.zero_grad()
print(lin.weight.grad, lin.bias.grad)
# functional API
xs = torch.from_numpy(rng.standard_normal(3))


def fn(t):
    return torch.stack([t[0] * t[1], t[1].sin(), (t ** 2).sum()])


def scal(t):
    return (t[0] ** 2 * t[1] + t[2].exp()).sum()


J = AF.jacobian(fn, xs)
Jv = AF.jacobian(fn, xs, vectorize=True)
N("jac", J, Jv)
H = AF.hessian(scal, xs)
N("fwd jac", AF.jacobian(fn, xs, vectorize=True, strategy="forward-mode"))
N("vec hess", AF.hessian(scal, xs, vectorize=True))
N("hess", H)
Hc = AF.hessian(scal, xs.clone().requires_grad_(), create_graph=True)
print(Hc.requires_grad, AF.jacobian(fn, xs).requires_grad)
o, vj = AF.vjp(fn, xs, torch.ones(3, dtype=torch.float64))
N("vjp", o, vj)
o, jv = AF.jvp(fn, xs, torch.ones(3, dtype=torch.float64))
N("jvp", jv)
o, hv = AF.hvp(scal, xs, torch.ones(3, dtype=torch.float64))
N("hvp", hv)
o, vh = AF.vhp(scal, xs, torch.ones(3, dtype=torch.float64))
N("vhp", vh)
J2 = AF.jacobian(lambda s, t: s * t, (xs, xs + 1))
print(type(J2).__name__, len(J2), J2[0].shape)
J3 = AF.jacobian(lambda s: (s.sum(), s * 2), xs, strict=True)
print(type(J3).__name__, J3[0].shape, J3[1].shape)
