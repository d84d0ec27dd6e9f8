"""Mixed precision as small GPT trainers write it on CPU: a dtype table with bfloat16, an
autocast context chosen from it, GradScaler enabled only for float16, a causal attention block
with exact GELU; then bfloat16 parameters (Module.bfloat16) and bfloat16 printing and casts.
Losses under reduced precision are printed to 2 decimals (the two frameworks may round a
bfloat16 matmul's last bit differently); dtypes, shapes and scaler states exactly."""

import contextlib
import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional

ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
print(ptdtype["bfloat16"], torch.finfo(torch.bfloat16).eps, torch.bfloat16.is_floating_point)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def weights(model):
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))


rng = np.random.default_rng(1)
x = torch.tensor(rng.standard_normal((4, 8, 16)).astype(np.float32))
target = torch.tensor(rng.standard_normal((4, 8, 16)).astype(np.float32))

for dtype in ("float32", "bfloat16", "float16"):
    model = Block(16, 2)
    weights(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ctx = contextlib.nullcontext() if dtype == "float32" else \
        torch.amp.autocast(device_type="cpu", dtype=ptdtype[dtype])
    scaler = torch.amp.GradScaler("cpu", enabled=(dtype == "float16"))
    losses = []
    for step in range(6):
        with ctx:
            out = model(x)
            loss = F.mse_loss(out, target)
        if step == 0:
            print(dtype, "out", out.dtype, "loss", loss.dtype, tuple(out.shape))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    print(dtype, "grad", model.fc.weight.grad.dtype, "scale", scaler.get_scale(),
          "learns", losses[-1] < losses[0], "losses", " ".join(f"{v:.2f}" for v in losses))

# bfloat16 parameters and activations throughout
model = Block(16, 2)
weights(model)
model = model.bfloat16()
print(model.fc.weight.dtype, model(x.bfloat16()).dtype)
t = torch.tensor([1.0, 2.5, 3.14159, -1e-3, 65504.0], dtype=torch.bfloat16)
print(t)
print(t.float(), t.half(), t.to(torch.float64))
print(torch.promote_types(torch.bfloat16, torch.float16), (t * 2).dtype, (t + t.float()).dtype)
print(t.sum(), t.mean(), t.softmax(0), t.argmax())
