"""Hooks (forward hooks with_kwargs/always_call, state_dict hooks) and nn.functional edge
cases: cross_entropy with probability targets and weights, nll_loss all ignored, interpolate,
pad modes, conv padding='same' with dilation, embedding max_norm, batch_norm cumulative
average, layer_norm without affine, multihead attention masks."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


rng = np.random.default_rng(5)
T = lambda *s: torch.tensor(rng.standard_normal(s).astype(np.float32))  # noqa: E731

lin = nn.Linear(3, 2)
lin.load_state_dict({"weight": T(2, 3), "bias": T(2)})
calls = []
h1 = lin.register_forward_hook(lambda m, a, kw, out: calls.append(("kw", sorted(kw))) or out * 2,
                               with_kwargs=True)
h2 = lin.register_forward_pre_hook(lambda m, a: calls.append(("pre", len(a))))
h3 = lin.register_forward_hook(lambda m, a, o: calls.append(("always", o.shape)), always_call=True)
x = T(4, 3)
N("hooked", lin(x))
print(calls)
h1.remove(), h2.remove(), h3.remove()
N("unhooked", lin(x))
print(len(lin._forward_hooks), len(lin._forward_pre_hooks))
mm = torch.nn.modules.module
seq = nn.Sequential(lin, nn.ReLU())
g1 = mm.register_module_forward_pre_hook(lambda m, a: calls.append(("gpre", type(m).__name__)))
g2 = mm.register_module_forward_hook(lambda m, a, kw, o: calls.append(("gpost", sorted(kw))),
                                     with_kwargs=True, always_call=True)
calls.clear()
N("global hooks", seq(x))
print(calls)
g1.remove(), g2.remove()
lin.register_state_dict_post_hook(lambda m, sd, prefix, local: sd.__setitem__(prefix + "x", 1))
print(list(lin.state_dict()))
lin.register_load_state_dict_post_hook(lambda m, keys: keys.unexpected_keys.clear())
print(lin.load_state_dict({"weight": lin.weight.data, "bias": lin.bias.data, "junk": 1}))

logits = T(5, 4)
probs = F.softmax(T(5, 4), dim=1)
w = torch.tensor([1.0, 2.0, 0.5, 1.5])
N("ce probs", F.cross_entropy(logits, probs), F.cross_entropy(logits, probs, weight=w))
N("ce probs smooth", F.cross_entropy(logits, probs, label_smoothing=0.2, reduction="sum"))
tgt = torch.tensor([0, 3, 1, 1, 2])
N("ce weight", F.cross_entropy(logits, tgt, weight=w), F.cross_entropy(logits, tgt, weight=w,
                                                                         label_smoothing=0.1))
N("ce ignore", F.cross_entropy(logits, tgt, ignore_index=1, reduction="none"))
lp = F.log_softmax(logits, dim=1)
N("nll all ignored", F.nll_loss(lp, torch.full((5,), -100)),
  F.nll_loss(lp, torch.full((5,), 2), ignore_index=2, reduction="sum"))
out = F.nll_loss(-lp, tgt, ignore_index=1, reduction="none")
print(out[tgt == 1], F.cross_entropy(-lp, tgt, ignore_index=1, reduction="none")[tgt == 1])
img = T(1, 2, 3, 4)
for mode in ["nearest", "nearest-exact", "bilinear", "bicubic", "area"]:
    kw = {"align_corners": False} if mode in ("bilinear", "bicubic") else {}
    out = F.interpolate(img, scale_factor=1.7, mode=mode, **kw)
    out2 = F.interpolate(img, scale_factor=1.7, mode=mode, recompute_scale_factor=True, **kw)
    print(mode, tuple(out.shape))
    N(mode, out.sum(), out2.sum(), out[0, 0, 1])
N("antialias", F.interpolate(img, scale_factor=0.5, mode="bilinear", antialias=True),
  F.interpolate(img, size=(2, 3), mode="bicubic", antialias=True))
N("bicubic ac", nn.Upsample(size=(4, 6), mode="bicubic", align_corners=True)(img)[0, 0])
N("bilinear ac", F.interpolate(img, size=(5, 7), mode="bilinear", align_corners=True)[0, 1, 2])
N("linear", F.interpolate(T(1, 1, 4), scale_factor=2.5, mode="linear"))
for mode in ["constant", "reflect", "replicate", "circular"]:
    N("pad " + mode, F.pad(img, (1, 2, 2, 1), mode=mode)[0, 0])
N("pad value neg", F.pad(img, (-1, 1, 0, 0), value=3.0)[0, 1])
conv = nn.Conv2d(2, 3, 3, padding="same", dilation=2)
conv.load_state_dict({"weight": T(3, 2, 3, 3), "bias": T(3)})
y = conv(T(1, 2, 5, 6))
print(tuple(y.shape))
N("same dil", y[0, 1])
conv1 = nn.Conv1d(1, 1, 4, padding="same", dilation=3, bias=False)
conv1.load_state_dict({"weight": T(1, 1, 4)})
N("same 1d even", conv1(T(1, 1, 9)))
emb = nn.Embedding(5, 3, max_norm=1.0)
emb.load_state_dict({"weight": T(5, 3) * 3})
out = emb(torch.tensor([[0, 2], [2, 4]]))
N("emb out", out)
N("emb renormed", emb.weight.data.norm(dim=1))
bn = nn.BatchNorm1d(3, momentum=None)
for _ in range(3):
    bn(T(6, 3))
N("bn cumulative", bn.running_mean, bn.running_var)
print(bn.num_batches_tracked)
bn.eval()
N("bn eval", bn(T(2, 3)))
N("bn F", F.batch_norm(T(4, 3), torch.zeros(3), torch.ones(3), training=True, momentum=0.3))
ln = nn.LayerNorm(4, elementwise_affine=False)
print(list(ln.state_dict()), ln)
N("ln", ln(T(2, 4)), F.layer_norm(T(2, 4), (4,), eps=1e-3))
mha = nn.MultiheadAttention(4, 2, batch_first=True)
mha.load_state_dict({k: T(*v.shape) for k, v in mha.state_dict().items()})
q, k = T(2, 3, 4), T(2, 5, 4)
bool_mask = torch.tensor(rng.random((3, 5)) > 0.7)
float_mask = torch.zeros(3, 5).masked_fill(bool_mask, float("-inf"))
kpm = torch.tensor([[False] * 5, [False, False, False, True, True]])
o1, w1 = mha(q, k, k, attn_mask=bool_mask)
o2, w2 = mha(q, k, k, attn_mask=float_mask)
N("mha bool vs float", o1 - o2, w1 - w2)
o3, w3 = mha(q, k, k, key_padding_mask=kpm, average_attn_weights=False)
print(tuple(w3.shape))
N("mha kpm", o3[1], w3[1, :, :, 3:])
o4, w4 = mha(q, k, k, key_padding_mask=kpm, need_weights=False)
print(w4, torch.allclose(o3, o4, atol=1e-6))
N("mha causal", mha(q, q, q, attn_mask=nn.Transformer.generate_square_subsequent_mask(3))[1])
