"""A character-level LSTM language model as in pytorch/examples' word_language_model:
embedding, multi-layer LSTM with dropout 0, weight tying with the decoder, truncated BPTT with
repackaged hidden state (h.detach()), clip_grad_norm_, plain SGD by hand, eval perplexity."""

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


text = "hello world, the quick brown fox jumps over the lazy dog. " * 3
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(len(chars), ids.shape, ids.dtype, ids[:10])


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight  # weight tying (ninp == nhid)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


train_data = batchify(ids, 4)
print(train_data.shape, train_data.is_contiguous(), train_data[:3])
model = RNNModel(len(chars), 8, 8, 2)
print(model)
print([n for n, _ in model.named_parameters()], len(list(model.parameters())))
print(model.decoder.weight is model.encoder.weight, len(model.state_dict()))
rng = np.random.default_rng(7)
model.load_state_dict({k: torch.from_numpy(rng.uniform(-0.3, 0.3, v.shape).astype(np.float32))
                       for k, v in model.state_dict().items()})
criterion = nn.NLLLoss()
bptt, lr, clip = 5, 2.0, 0.25


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


model.train()
hidden = model.init_hidden(4)
total_loss = 0.0
for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
    data, targets = get_batch(train_data, i)
    model.zero_grad()
    hidden = repackage_hidden(hidden)
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    total_loss += loss.item()
    N(f"batch {batch} loss norm", loss, norm)
    print(hidden[0].requires_grad, hidden[0].grad_fn is not None, hidden[1].shape, output.shape)
N("avg loss ppl", total_loss / (batch + 1), math.exp(total_loss / (batch + 1)))

model.eval()
with torch.no_grad():
    hidden = model.init_hidden(1)
    inp = torch.tensor([[stoi["t"]]])
    generated = []
    for _ in range(12):
        output, hidden = model(inp, hidden)
        word_idx = output.argmax(dim=1)
        inp.fill_(word_idx.item())
        generated.append(chars[word_idx.item()])
    print(repr("".join(generated)), output.shape, hidden[0].requires_grad)
    out, _ = model(batchify(ids, 1)[:20], model.init_hidden(1))
    N("eval nll", criterion(out, batchify(ids, 1)[1:21].view(-1)))
    print("acc", (out.argmax(1) == batchify(ids, 1)[1:21].view(-1)).float().mean().item() > -1)
N("encoder grad row", model.encoder.weight.grad[stoi["o"]])
