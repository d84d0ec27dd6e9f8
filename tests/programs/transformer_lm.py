"""A small transformer language model as in pytorch/examples' word_language_model
TransformerModel: sinusoidal PositionalEncoding buffer, causal mask, nn.TransformerEncoder,
weight init with uniform_/zero_, CrossEntropyLoss, AdamW with a warmup LambdaLR."""

import math
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


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, 0.0)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, 0.0)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src, src_mask):
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, mask=src_mask)
        return F.log_softmax(self.decoder(output), dim=-1)


def causal_mask(sz):
    return torch.log(torch.tril(torch.ones(sz, sz)))


mask = causal_mask(4)
print(mask)
print(nn.Transformer.generate_square_subsequent_mask(4))
print(torch.triu(torch.full((3, 3), float("-inf")), diagonal=1))
model = TransformerModel(11, 8, 2, 16, 2)
print(model)
print(model.pos_encoder.pe.shape, [n for n, _ in model.named_buffers()])
rng = np.random.default_rng(5)
sd = model.state_dict()
print(len(sd), [k for k in sd if "layers.0" in k])
model.load_state_dict({k: torch.tensor(rng.uniform(-0.3, 0.3, tuple(v.shape)), dtype=torch.float32)
                       if k != "pos_encoder.pe" else v for k, v in sd.items()})
N("pe", model.pos_encoder.pe[3, 0])
data = torch.tensor(rng.integers(0, 11, (13, 3)))
criterion = nn.NLLLoss()
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                               {"params": no_decay, "weight_decay": 0.0}], lr=3e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))
print([len(g["params"]) for g in optimizer.param_groups], optimizer.defaults["betas"])
for step in range(4):
    model.train()
    for i in range(0, data.size(0) - 1, 4):
        seq_len = min(4, data.size(0) - 1 - i)
        src, tgt = data[i:i + seq_len], data[i + 1:i + 1 + seq_len]
        optimizer.zero_grad()
        out = model(src, causal_mask(seq_len))
        loss = criterion(out.view(-1, 11), tgt.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
    scheduler.step()
    N(f"step {step} loss lr", loss, scheduler.get_last_lr()[0], optimizer.param_groups[1]["lr"])
model.eval()
with torch.no_grad():
    out = model(data[:6], causal_mask(6))
    N("eval", out[-1, 0, :5])
    # the causal mask means an earlier position's output ignores later tokens
    changed = data[:6].clone()
    changed[5] = (changed[5] + 1) % 11
    out2 = model(changed, causal_mask(6))
    print(torch.allclose(out[:5], out2[:5], atol=1e-5), torch.allclose(out[5], out2[5]))
    enc = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, norm_first=True)
    enc.load_state_dict({k: torch.full_like(v, 0.05) for k, v in enc.state_dict().items()})
    y = enc(torch.ones(2, 3, 8), src_key_padding_mask=torch.tensor([[False, False, True]] * 2))
    N("norm_first", y[0, 0, :3])
    print(y.shape, torch.isnan(y).any().item())
