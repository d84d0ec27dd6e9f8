"""Custom autograd.Function with mark_dirty, mark_non_differentiable, save_for_backward,
once_differentiable and the setup_context style; dtype promotion in mixed int/float/bool ops
and in-place ops (and torch's cast errors), integer division and remainder with negatives,
broadcasting edge cases and type conversion methods."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
once_differentiable = torch.autograd.function.once_differentiable


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


def err(f):
    try:
        r = f()
        print("no error", getattr(r, "dtype", r))
    except Exception as e:
        # graphgrad's typed errors subclass the builtin torch raises; print that one
        kind = next(c for c in type(e).__mro__ if c.__module__ == "builtins").__name__
        # graphgrad appends "(in op: shapes ...)" to broadcast errors: compare torch's part
        print(kind, str(e).split("\n")[0].split(". ")[0].split(" (in ")[0].rstrip("."))


class AddOneInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class SortWithIdx(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sort(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, idx = output
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.n = inputs[0].shape[0]

    @staticmethod
    def backward(ctx, gv, gi):
        (idx,) = ctx.saved_tensors
        return torch.zeros(ctx.n, dtype=gv.dtype).scatter(0, idx, gv)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


rng = np.random.default_rng(3)
x = torch.tensor(rng.standard_normal(4), requires_grad=True)
y = x * 1
z = AddOneInplace.apply(y)
print(z is y, y._version, type(z.grad_fn).__name__ == type(y.grad_fn).__name__)
(z * z).sum().backward()
N("dirty", x.grad, z)
err(lambda: AddOneInplace.apply(x))
x.grad = None
v, i = SortWithIdx.apply(x)
print(i.requires_grad, v.requires_grad, i.dtype)
(v * torch.arange(4.0, dtype=torch.float64)).sum().backward()
N("sort grad", x.grad)
print(torch.autograd.gradcheck(lambda t: SortWithIdx.apply(t)[0], (x.detach().requires_grad_(),)))
x.grad = None
c = Cube.apply(x)
(g,) = torch.autograd.grad(c.sum(), x, create_graph=True)
N("cube grad", g)
err(lambda: g.sum().backward())
# dtype promotion
i32 = torch.tensor([3, -7, 8], dtype=torch.int32)
i64 = torch.tensor([2, 2, -3])
f16 = torch.tensor([0.5, 1.5, 2.5], dtype=torch.float16)
b = torch.tensor([True, False, True])
print((i32 + i64).dtype, (i32 + 1.5).dtype, (i64 * f16).dtype, (b + b).dtype, (b * 2).dtype)
print((b + 1.0).dtype, (i32 / i64).dtype, (i32 // i64).dtype, (f16 + torch.tensor(1.0)).dtype)
print((i64 + torch.tensor(1.0, dtype=torch.float64)).dtype, torch.result_type(i32, 2.0))
print(torch.promote_types(torch.int8, torch.uint8), torch.can_cast(torch.float32, torch.int32))
print((torch.tensor(1, dtype=torch.uint8) - 2).dtype, (i32 ** 2).dtype, (i32 ** 0.5).dtype)
err(lambda: i64.add_(1.5))
err(lambda: i64.mul_(f16))
err(lambda: b.add_(1))
err(lambda: f16.add_(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)))
err(lambda: i32.add_(i64))
err(lambda: i32.div_(2))
err(lambda: torch.tensor([1.0]).sub_(True))
err(lambda: i64.clone().clamp_(0.5))
err(lambda: i64.clone().clamp_(torch.tensor(0.5)))
err(lambda: b.clone().clamp_max_(0.5))
# integer division and remainder with negatives
a = torch.tensor([7, -7, 7, -7, 0])
d = torch.tensor([2, 2, -2, -2, 3])
print(a // d, a % d, torch.fmod(a, d), torch.remainder(a, d))
print(torch.div(a, d, rounding_mode="trunc"), torch.div(a, d, rounding_mode="floor"), a / d)
af = a.double()
print(af // d, af % d, torch.fmod(af, -2.5), torch.remainder(-af[:4], 2.5))
print(a // 2, -7 // torch.tensor(2), 7 % torch.tensor(-3), torch.tensor(-7.5) // 2)
err(lambda: a // torch.zeros(5, dtype=torch.int64))
# broadcasting edge cases
e0 = torch.zeros(0, 3)
print((e0 + torch.ones(3)).shape, (torch.ones(2, 1, 3) * torch.ones(4, 1)).shape)
print((torch.tensor(2.0) * torch.ones(1, 0)).shape, torch.ones(3, 1).expand(3, 4).stride())
print(torch.broadcast_shapes((1, 3), (2, 1), (1,)), torch.broadcast_shapes(3, (2, 1)))
print(torch.broadcast_tensors(a, torch.ones(2, 1))[0].shape)
err(lambda: torch.broadcast_shapes((2,), (3,)))
err(lambda: torch.ones(2, 3) + torch.ones(3, 2))
err(lambda: torch.ones(3).expand(2, 4))
bx = torch.ones(1, 3, requires_grad=True)
(bx * torch.ones(4, 1)).sum().backward()
print(bx.grad)
# type conversions
t = torch.tensor([1.7, -2.5, 0.0])
print(t.int(), t.long().dtype, t.bool(), t.half().dtype, t.to(torch.uint8), t.type(torch.int16))
print(t.type(), t.double().type(), t.char().dtype, t.short().dtype, t.byte().dtype, t.float().dtype)
print(t.type_as(i64), t.to(i32).dtype, t.to(dtype=torch.float16).dtype, t.tolist())
print(b.float(), b.long().sum(), torch.tensor(3.9).int().item(),
      torch.tensor(-3.9).long().item())
print(t.is_floating_point(), i64.is_floating_point(), t.to(torch.complex64).dtype,
      i64.numpy().dtype)
err(lambda: torch.tensor([2]) ** -1)
err(lambda: torch.tensor([1, 2]).std())
err(lambda: torch.tensor([1, 2]).var(0))
err(lambda: torch.tensor([1, 2]).mean())
err(lambda: torch.ones(2, dtype=torch.int64).requires_grad_())
err(lambda: torch.tensor([1, 2], requires_grad=True))
i8 = torch.tensor([5, -3, 0, 7], dtype=torch.int8)
print(i8 * 100, i8 // -2, i8 % -2, i8 >> 1, i8 << 2, i8 & 3, ~i8)
print(torch.tensor([True]) & torch.tensor([False]), torch.tensor([True]) + torch.tensor([True]))
err(lambda: -torch.tensor([True]))
err(lambda: torch.tensor([1.5]) & 1)
print(torch.tensor([1, 2]) / torch.tensor([0, 0]), torch.tensor([-1.0, 0.0, 1.0]) / 0)
