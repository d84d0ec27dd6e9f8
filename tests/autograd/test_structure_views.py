"""diagonal() is a writable view, compared with torch: writes through it reach the base's
storage, its version counter and its autograd history (CopySlices), and the gradients of both
the base and the written values; tril_/triu_ in place, on tensors and on views; the views
meshgrid and broadcast_tensors return.
"""

import importlib.util
import pathlib

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like


def leaf(m, shape, seed=0):
    return m.tensor(h.data(shape, seed), requires_grad=True)


def test_write_through_diagonal_reaches_base():
    def prog(m):
        x = m.zeros(3, 4)
        d = x.diagonal()
        v0 = x._version
        d.fill_(2.0)
        d[1] = 5.0
        return x, d, x._version > v0, d._version == x._version, d.is_contiguous()
    same(prog)


def test_diagonal_of_base_sees_later_writes():
    def prog(m):
        x = m.arange(12.0).reshape(3, 4)
        d = x.diagonal(1)
        x.mul_(2)
        return d
    same(prog)


def test_inplace_through_diagonal_rebases_history():
    def prog(m):
        x = leaf(m, (3, 4))
        w = leaf(m, (3,), seed=1)
        y = x * 1.5
        d = y.diagonal()
        d.mul_(w)
        out = (y * m.tensor(h.data((3, 4), seed=2))).sum()
        gx, gw = m.autograd.grad(out, (x, w))
        return y, h.fn(y), h.fn(d), gx, gw
    same(prog)


def test_inplace_through_offset_diagonal_of_batch():
    def prog(m):
        x = leaf(m, (2, 3, 4))
        y = x.clone()
        y.diagonal(-1, 1, 2).zero_()
        y.diagonal(1, -1, 0).add_(3.0)
        y.backward(m.tensor(h.data((2, 3, 4), seed=3)))
        return y, x.grad
    same(prog)


def test_double_backward_through_diagonal_write():
    def prog(m):
        x = leaf(m, (3, 3))
        y = x * x
        y.diagonal().mul_(x.diagonal())
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return g, gg
    same(prog)


def test_diagonal_of_leaf_inplace_raises():
    def prog(m):
        x = leaf(m, (3, 3))
        x.diagonal().mul_(2)
    raises_like(prog, "leaf Variable that requires grad")


def test_saved_diagonal_modified_raises():
    def prog(m):
        x = leaf(m, (3, 3))
        y = x * 1.0
        z = y.diagonal().pow(2)  # saves the view, which shares the base's version counter
        y.add_(1)
        z.sum().backward()
    raises_like(prog, "modified by an inplace operation")


def test_tril_triu_inplace():
    def prog(m):
        x = leaf(m, (3, 4))
        y = x * 2
        a = y.tril_(-1)
        z = (x + 1).triu_(1)
        (y.sum() + (z * z).sum()).backward()
        return a is y, y, z, h.fn(y), h.fn(z), x.grad
    same(prog)


def test_tril_inplace_through_view():
    def prog(m):
        x = leaf(m, (4, 3))
        y = x.clone()
        y[1:].triu_()
        y.backward(m.tensor(h.data((4, 3), seed=4)))
        return y, h.fn(y), x.grad
    same(prog)


def test_meshgrid_default_indexing_warns_and_is_ij():
    def prog(m):
        a, b = m.tensor([1.0, 2.0, 3.0]), m.tensor([4.0, 5.0])
        grids, categories = h.warnings_of(lambda: m.meshgrid(a, b))
        return grids, categories, [g.is_contiguous() for g in grids]
    same(prog)


def test_broadcast_views_share_storage():
    def prog(m):
        x = m.arange(3.0)
        gx, gy = m.meshgrid(x, m.zeros(2), indexing="xy")
        bx, _ = m.broadcast_tensors(x, m.zeros(2, 1))
        x.add_(10)
        return gx, bx, gx._version == x._version
    same(prog)
