"""A custom autograd.Function (ctx.save_for_backward, needs_input_grad, mark_non_differentiable,
once_differentiable-free double backward) checked with gradcheck/gradgradcheck, a regression
using it, and feature extraction with forward hooks, forward pre-hooks, full backward hooks and
tensor hooks, with handles removed afterwards."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
from_np = torch.from_numpy


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


class MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, k):
        ctx.save_for_backward(x, w)
        ctx.k = k
        return x * w + k

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g * w if ctx.needs_input_grad[0] else None
        gw = g * x if ctx.needs_input_grad[1] else None
        return gx, gw, None


class ArgMaxAndMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        v, i = x.max(dim=-1)
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(x, i)
        return v, i

    @staticmethod
    def backward(ctx, gv, gi):
        x, i = ctx.saved_tensors
        return torch.zeros_like(x).scatter(-1, i.unsqueeze(-1), gv.unsqueeze(-1))


rng = np.random.default_rng(4)
x = torch.linspace(-1.0, 1.0, 50)
y = torch.from_numpy(np.sin(np.linspace(-1.0, 1.0, 50)).astype(np.float32))
a = torch.full((), 0.0, requires_grad=True)
b = torch.full((), -1.0, requires_grad=True)
c = torch.full((), 0.0, requires_grad=True)
d = torch.full((), 0.3, requires_grad=True)
P3 = LegendrePolynomial3.apply
for t in range(60):
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= 5e-4 * p.grad
            p.grad = None
    if t % 20 == 19:
        N(f"t={t} loss a b c d", loss, a, b, c, d)
print(y_pred.grad_fn is not None, type(y_pred.grad_fn).__name__ == "AddBackward0")
xd = torch.tensor(rng.standard_normal(4), dtype=torch.float64, requires_grad=True)
wd = torch.tensor(rng.standard_normal(4), dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(P3, (xd,)), torch.autograd.gradgradcheck(P3, (xd,)))
print(torch.autograd.gradcheck(lambda x, w: MulAdd.apply(x, w, 2.0), (xd, wd)))
out = MulAdd.apply(xd, wd.detach(), 1.0)
out.sum().backward()
N("muladd", xd.grad, out)
print(wd.grad)
v, i = ArgMaxAndMax.apply(torch.tensor([[1.0, 3.0, 2.0]], requires_grad=True))
print(i, i.requires_grad, v.requires_grad)
print(torch.autograd.gradcheck(lambda t: ArgMaxAndMax.apply(t)[0], (xd.view(2, 2),)))

# feature extraction with hooks
model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(12, 5), nn.Tanh(), nn.Linear(5, 2))
model.load_state_dict({k: from_np(rng.normal(0, 0.4, tuple(v.shape)).astype(np.float32))
                       for k, v in model.state_dict().items()})
activation, grads, calls = {}, {}, []


def get_activation(name):
    def hook(module, inp, output):
        activation[name] = output.detach()
    return hook


def bwd_hook(module, grad_input, grad_output):
    grads[type(module).__name__] = (grad_input[0], grad_output[0])


def pre_hook(module, args):
    calls.append(("pre", type(module).__name__, args[0].shape))
    return (args[0] * 2,)


handles = [model[1].register_forward_hook(get_activation("relu")),
           model[4].register_forward_hook(get_activation("fc")),
           model[5].register_full_backward_hook(bwd_hook),
           model[4].register_forward_pre_hook(pre_hook)]
inp = torch.tensor(rng.standard_normal((2, 1, 4, 4)), dtype=torch.float32, requires_grad=True)
out = model(inp)
out.sum().backward()
print(sorted(activation), activation["relu"].shape, activation["fc"].requires_grad, calls)
N("relu act", activation["relu"][0, 0])
N("tanh grads", grads["Tanh"][0], grads["Tanh"][1])
N("input grad", inp.grad[0, 0])
for h in handles:
    h.remove()
calls.clear()
out2 = model(inp)
print(calls, torch.allclose(out2, out), len(activation))
feats = []
hh = model[3].register_forward_hook(lambda m, i, o: feats.append(o.shape))
z = torch.ones(3, requires_grad=True)
th = z.register_hook(lambda g: g * 10)
(z * z).sum().backward()
print(z.grad, model(inp[:1]).shape, feats)
th.remove()
hh.remove()
z.grad.zero_()
(z * z).sum().backward()
print(z.grad, feats)
