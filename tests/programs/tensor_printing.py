"""Printing tensors the way scripts do: reprs of many shapes and dtypes, print options,
summarised large tensors, scientific notation, negative zero, nan/inf, requires_grad and
grad_fn in reprs, and conversions between tensors, Python numbers, lists and NumPy."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn

rng = np.random.default_rng(3)
f = np.round(rng.standard_normal((3, 4)), 3).astype(np.float32)
print(torch.tensor(f))
print(torch.tensor(f, dtype=torch.float64))
print(torch.tensor(f).half())
print(torch.tensor([1, -2, 300]), torch.tensor([1, 2], dtype=torch.int32))
print(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor([1, 2], dtype=torch.int16))
print(torch.tensor([True, False, True]), torch.tensor(True), torch.tensor(5), torch.tensor(2.5))
print(torch.tensor([]), torch.zeros(0, 3), torch.zeros(2, 0), torch.ones(1, 1, 1))
print(torch.Tensor(), torch.Tensor([1, 2]), torch.Tensor(2, 0), torch.zeros(()), torch.ones([]))
print(torch.tensor([0.0, -0.0, 1.0]), torch.tensor([-0.0]))
print(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5]))
print(torch.tensor([1e-8, 1.0, 1e8]), torch.tensor([1e-5, 2e-5]), torch.tensor([123456789.0]))
print(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.25, 100.5]), torch.tensor([0.1, 0.2]))
print(torch.tensor([[1e10, 1], [2, 3]], dtype=torch.float64))
print(torch.tensor([1, 2.5], dtype=torch.float64), torch.tensor(1e-20), torch.tensor(-3.0))
print(torch.arange(2000.0))
print(torch.arange(1200).reshape(40, 30))
print(torch.tensor(rng.standard_normal((2, 3, 4)).round(2), dtype=torch.float32))
print(torch.arange(24).reshape(2, 3, 4) > 10)
w = torch.tensor([[0.5, -1.5]], requires_grad=True)
print(w, w * 2, (w * 2).sum(), w.exp().mean(1))
print(w.detach(), w[0], w.t(), w.view(2), w.clone(), w.unsqueeze(0).expand(2, 1, 2))
print(nn.Parameter(torch.tensor([1.0, 2.0])), nn.Parameter(torch.tensor([1.0]), False))
print(repr(torch.tensor(3.0, requires_grad=True) + 1), torch.tensor([1.0], dtype=torch.float64) * 2)
print(torch.tensor([2], dtype=torch.int64), torch.tensor([2.0], dtype=torch.float16))
print(torch.tensor([[1, 2], [3, 4]], dtype=torch.float64).sum(0), torch.zeros(3, dtype=torch.long))
print(torch.tensor(f).max(1), torch.tensor(f).sort(1, descending=True).indices)
print(torch.tensor(f).min(0, keepdim=True))
torch.set_printoptions(precision=2)
print(torch.tensor(f), torch.tensor([1.23456789e-7, 1.0]))
torch.set_printoptions(sci_mode=True)
print(torch.tensor([1.5, 2.25]))
torch.set_printoptions(sci_mode=False)
print(torch.tensor([1e-8, 1.0, 1e8]))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(10), torch.arange(36.0).reshape(6, 6))
torch.set_printoptions(linewidth=40)
print(torch.arange(30.0) / 7)
torch.set_printoptions(profile="default")
print(torch.arange(30.0) / 7)
torch.set_printoptions(precision=4, sci_mode=None)
torch.set_default_dtype(torch.float64)  # the repr then leaves out float64, not float32
print(torch.tensor([1.5, 2.0]), torch.ones(2, dtype=torch.float32), torch.tensor([]),
      torch.zeros(0, dtype=torch.float32), torch.arange(3) / 2, torch.tensor([1, 2]).float())
torch.set_default_dtype(torch.float32)
print(str(torch.tensor([1.0, 2.0])), f"{torch.tensor(2.5)}", f"{torch.tensor(3.14159):.3f}")
# the old formatting styles on purpose: each calls Tensor.__format__ differently
print("%.2f" % torch.tensor(1.5), "{:.1e}".format(torch.tensor(12345.0)),  # noqa: UP031, UP032
      format(torch.tensor(2)))
# conversions
t = torch.tensor(f)
print(t.tolist()[0], type(t.tolist()[0][0]), t[0, 0].item(), type(torch.tensor(3).item()))
print(float(torch.tensor(2.5)), int(torch.tensor(7.9)), bool(torch.tensor(0)),
      complex(torch.tensor(1.0)))
print(torch.tensor(np.arange(3)).dtype, torch.tensor(np.float32(2.5)), torch.tensor(np.array(2.0)))
print(torch.as_tensor([1, 2]).dtype, torch.as_tensor(np.ones(2, np.float32)).dtype)
a = np.zeros(3, dtype=np.float32)
s = torch.from_numpy(a)
s[0] = 5
print(a, s.numpy().dtype, type(s.numpy()), t.numpy().shape, torch.tensor([1, 2]).numpy())
print(torch.tensor([[1, 2]]).tolist(), torch.tensor(3).tolist(), torch.tensor([True]).tolist())
print(torch.tensor(range(4)), torch.tensor((1.5, 2)), torch.tensor([np.float64(1.5)]).dtype)
print(np.array(torch.tensor([1.0, 2.0])), np.asarray(torch.tensor([1, 2])).dtype)
print(torch.tensor(5) + np.int64(2), (torch.tensor([1.0]) * np.float64(2.0)).dtype)
print(t.shape, t.size(), list(t.shape), t.shape == (3, 4), t.shape[0], torch.Size([2, 3]))
print(t.dtype, t.dtype.is_floating_point, t.element_size(), t.nbytes, t.itemsize)
print(torch.get_default_dtype(), torch.float32 is torch.float, torch.int64 == torch.long)
print(torch.tensor([1, 2]).float().dtype, torch.tensor(1).is_floating_point())
print(len(torch.zeros(5, 2)), torch.zeros(2, 3).T.shape, torch.zeros(2, 3).mT.shape)
print(torch.tensor([1.5]).type(), torch.tensor([1]).type(), torch.tensor([1.0]).type(torch.int32))
print(torch.finfo(torch.float32).eps, torch.iinfo(torch.int32).max, torch.finfo(torch.float16).max)
