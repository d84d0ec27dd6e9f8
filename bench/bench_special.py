"""Special-function benchmarks: graphgrad against torch eager on 2**20 float32 elements, one thread.

Each line times one op (erf, erfc, erfinv, exact GELU forward and forward + backward, erfcx,
lgamma, digamma, i0, ndtri, log_ndtr) on the same 2**20 float32 values in both frameworks, and
a GELU MLP training step (Linear 512-2048, exact GELU, Linear 2048-512, batch 256, MSE, SGD),
the shape of a small GPT's feed-forward block, and a small GPT's whole iteration (two blocks,
d=128, T=64, batch 8, AdamW). Prints medians and the ratio graphgrad / torch
(lower is better), measured alternately in the same run.
Run: ``python bench/bench_special.py [--quick]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _harness import compare  # noqa: E402

torch.set_num_threads(1)
N = 2 ** 20


def _values(kind):
    rng = np.random.default_rng(0)
    if kind == "unit":  # erfinv's domain
        return rng.uniform(-0.999, 0.999, N).astype(np.float32)
    if kind == "prob":  # ndtri's domain
        return rng.uniform(1e-6, 1 - 1e-6, N).astype(np.float32)
    if kind == "pos":
        return rng.uniform(0.01, 20.0, N).astype(np.float32)
    return rng.standard_normal(N).astype(np.float32)


UNARY = [  # (label, function of (module, tensor), input kind)
    ("erf", lambda m, x: m.erf(x), "normal"),
    ("erfc", lambda m, x: m.erfc(x), "normal"),
    ("erfinv", lambda m, x: m.erfinv(x), "unit"),
    ("gelu (exact) forward", lambda m, x: m.nn.functional.gelu(x), "normal"),
    ("special.erfcx", lambda m, x: m.special.erfcx(x), "normal"),
    ("special.ndtri", lambda m, x: m.special.ndtri(x), "prob"),
    ("special.log_ndtr", lambda m, x: m.special.log_ndtr(x), "normal"),
    ("lgamma", lambda m, x: m.lgamma(x), "pos"),
    ("digamma", lambda m, x: m.digamma(x), "pos"),
    ("i0", lambda m, x: m.i0(x), "normal"),
]


def _unary(fn, kind):
    data = _values(kind)

    def make(m):
        x = m.tensor(data)
        return lambda: fn(m, x)
    return make


def _gelu_fwd_bwd(m):
    x = m.tensor(_values("normal"), requires_grad=True)
    g = m.ones(N)

    def step():
        x.grad = None
        m.nn.functional.gelu(x).backward(g)
    return step


def _mlp_step(m):
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((2048, 512)).astype(np.float32) * 0.02
    w2 = rng.standard_normal((512, 2048)).astype(np.float32) * 0.02
    model = m.nn.Sequential(m.nn.Linear(512, 2048), m.nn.GELU(), m.nn.Linear(2048, 512))
    with m.no_grad():
        model[0].weight.copy_(m.tensor(w1))
        model[2].weight.copy_(m.tensor(w2))
    opt = m.optim.SGD(model.parameters(), lr=0.01)
    xb = m.tensor(rng.standard_normal((256, 512)).astype(np.float32))
    yb = m.tensor(rng.standard_normal((256, 512)).astype(np.float32))

    def step():
        opt.zero_grad()
        m.nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()
    return step


def _gpt_step(m):
    """A small GPT's training iteration: embedding, two pre-norm blocks (causal attention,
    exact-GELU MLP), tied head, cross entropy, AdamW. d=128, 4 heads, T=64, batch 8."""
    nn, F = m.nn, m.nn.functional
    d, heads, t, vocab = 128, 4, 64, 256

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b = x.shape[0]
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    m.manual_seed(0)
    emb, pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
    blocks = nn.Sequential(Block(), Block())
    ln = nn.LayerNorm(d)
    params = list(emb.parameters()) + list(pos.parameters()) + list(blocks.parameters()) + \
        list(ln.parameters())
    opt = m.optim.AdamW(params, lr=1e-3)
    rng = np.random.default_rng(2)
    idx = m.tensor(rng.integers(0, vocab, (8, t)))
    tgt = m.tensor(rng.integers(0, vocab, (8, t)))
    positions = m.arange(t)

    def step():
        opt.zero_grad()
        h = ln(blocks(emb(idx) + pos(positions)))
        loss = F.cross_entropy((h @ emb.weight.t()).view(-1, vocab), tgt.view(-1))
        loss.backward()
        opt.step()
    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeat = 5 if args.quick else 15
    print(f"2**20 float32 elements, one thread; numpy {np.__version__}, torch {torch.__version__}")
    for label, fn, kind in UNARY:
        compare(label, _unary(fn, kind), repeat, 1, unit="ms")
    compare("gelu (exact) forward + backward", _gelu_fwd_bwd, repeat, 1, unit="ms")
    compare("GELU MLP step 512-2048-512, b=256", _mlp_step, repeat, 1, unit="ms")
    compare("small GPT iteration (2 blocks, d=128)", _gpt_step, repeat, 1, unit="ms")


if __name__ == "__main__":
    main()
