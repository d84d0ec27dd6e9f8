"""In-place ops and views, advanced indexing, scatter/gather and index_add in a loss: the
tensor manipulation found inside real training code (masks, one-hot targets, top-k metrics,
embedding bags by hand, boolean masking of padded positions), with gradients through them."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
F = torch.nn.functional


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


rng = np.random.default_rng(6)
a = torch.arange(12.0).reshape(3, 4)
v = a[1]
v.mul_(10)
a[:, 0] += 1
a[2, [1, 3]] = torch.tensor([-1.0, -2.0])
a.t()[0].neg_()
print(a, v, v._base is a if hasattr(v, "_base") else None, a.is_contiguous(), a.t().is_contiguous())
b = a.clone()
b[b > 20] = 0
b.clamp_(min=-5).add_(1).div_(2)
b.masked_fill_(b == 0.5, 9)
print(b, b.data_ptr() == b.view(-1).data_ptr(), b.storage_offset(), b[1:].storage_offset())
c = torch.zeros(2, 5)
c.index_fill_(1, torch.tensor([0, 4]), 7)
c[0, 1:3].fill_(3)
c.narrow(1, 2, 2).copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
print(c, c.unfold(1, 2, 2) if False else c.flip(1), c.view(5, 2)[:, 1], c.reshape(-1)[::3])
idx = torch.tensor([[0, 2], [1, 1]])
m = torch.arange(9).reshape(3, 3)
print(m[idx], m[idx, idx], m[[0, 2], 1:], m[:, [True, False, True]], m[m % 2 == 0])
print(m[-1].flip(0), m[1:, -1], m[::2, ::2])
print(m[[[0, 1], [1, 2]]], m[[0, slice(1, 3)]])  # a list holding lists reads as a tuple
print(m[torch.tensor([2, 0])][:, torch.tensor([1])], m[None, :, None, 0].shape, m[..., 1:2].shape)
m[[0, 1], [1, 2]] = torch.tensor([100, 200])
m.index_put_((torch.tensor([2, 2]), torch.tensor([0, 0])), torch.tensor([5, 6]), accumulate=True)
print(m, m.diagonal(), m.triu(1), m.masked_select(m > 50), torch.take(m, torch.tensor([0, 8])))
print(torch.tensor([3, 1, 2]).scatter(0, torch.tensor([2, 0, 1]), torch.tensor([7, 8, 9])))
ones = torch.ones(3, dtype=torch.long)
print(torch.zeros(3, dtype=torch.long).scatter_add_(0, torch.tensor([0, 0, 2]), ones))
print(torch.zeros(2, 4).scatter_(1, torch.tensor([[1], [3]]), 1.0),
      torch.zeros(4).index_add_(0, torch.tensor([1, 1, 3]), torch.tensor([1.0, 2.0, 3.0])))
src = torch.tensor([1.0, 5.0, 2.0, 3.0])
print(torch.zeros(3).scatter_reduce(0, torch.tensor([0, 0, 2, 2]), src, reduce="amax",
                                    include_self=False))

logits = torch.tensor(rng.standard_normal((6, 5)), dtype=torch.float32, requires_grad=True)
target = torch.tensor([1, 0, 4, 4, 2, 3])
mask = torch.tensor([True, True, False, True, True, False])
logp = logits.log_softmax(-1)
picked = logp.gather(1, target.unsqueeze(1)).squeeze(1)
loss = -(picked * mask).sum() / mask.sum()
onehot = torch.zeros_like(logits).scatter_(1, target[:, None], 1.0)
loss2 = -(onehot * logp)[mask].sum(1).mean()
loss3 = F.nll_loss(logp[mask], target[mask])
N("losses", loss, loss2, loss3, F.cross_entropy(logits, target, reduction="none")[mask])
loss.backward()
N("grad", logits.grad[0], logits.grad[2])
top5 = logits.topk(3, dim=1).indices
correct = top5.eq(target.view(-1, 1).expand_as(top5))
print(top5, correct.float().sum(0), correct[:, :1].sum().item(), correct.any(1))

emb = torch.tensor(rng.standard_normal((7, 3)), dtype=torch.float32, requires_grad=True)
bags = torch.tensor([0, 2, 2, 5, 6, 1])
offsets = torch.tensor([0, 0, 1, 1, 2, 2])
pooled = torch.zeros(3, 3).index_add(0, offsets, emb[bags])
counts = torch.bincount(offsets, minlength=3).unsqueeze(1)
mean = pooled / counts
(mean ** 2).sum().backward()
N("bag", mean, emb.grad)
print(counts.squeeze(1), counts.dtype, mean.grad_fn is not None)

w = torch.tensor(rng.standard_normal(5), dtype=torch.float32, requires_grad=True)
h = w * 2
h2 = h.view(5, 1)
h2[1:3] = 0
h.clamp_(max=1.0)
h.sum().backward()
N("inplace grad", w.grad, h)
print(h._version > 0 if hasattr(h, "_version") else True, h2.grad_fn is not None)
x = torch.ones(2, 3, requires_grad=True)
y = x.exp()
y.add_(1)
try:
    z = x.sigmoid()
    z.mul_(2)
    z.sum().backward()
    print("sigmoid inplace ok", x.grad)
except RuntimeError as e:
    print("RuntimeError", "modified by an inplace operation" in str(e))
u = x.detach().clone()
u.requires_grad_(True)
u.data.mul_(3)
print(u, u.sum(), x.sum().item())
pad = torch.tensor([[1, 2, 0, 0], [3, 0, 0, 0]])
lengths = (pad != 0).sum(1)
seq_mask = torch.arange(4)[None, :] < lengths[:, None]
print(lengths, seq_mask, pad.masked_fill(~seq_mask, -1), torch.where(seq_mask, pad, -9))
print(torch.nonzero(seq_mask), seq_mask.long().cumsum(1), seq_mask.flip(1).int().argmax(1))
# NumPy's argument names, which torch accepts too
print(pad.sum(axis=1), pad.float().mean(axis=0, keepdims=True), pad.max(axis=1).values,
      pad.argmax(axis=1), torch.min(pad, axis=0).indices, torch.cat([pad, pad], axis=1).shape)
