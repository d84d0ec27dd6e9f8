"""A variable-length sequence classifier as written in many tutorials: pad_sequence,
pack_padded_sequence (batch_first, unsorted lengths), a bidirectional batch_first LSTM,
pad_packed_sequence, masked mean pooling, CrossEntropyLoss with class weights, RMSprop with a
StepLR, and evaluation with argmax accuracy and a confusion matrix built with index_put_."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
rnn_utils = torch.nn.utils.rnn


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


class Classifier(nn.Module):
    def __init__(self, vocab, emb, hidden, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, classes))

    def forward(self, tokens, lengths):
        packed = rnn_utils.pack_padded_sequence(self.embedding(tokens), lengths, batch_first=True,
                                                enforce_sorted=False)
        out, (h_n, c_n) = self.lstm(packed)
        padded, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=True)
        mask = (torch.arange(padded.size(1))[None, :] < out_lengths[:, None]).unsqueeze(-1)
        pooled = (padded * mask).sum(1) / out_lengths[:, None].float()
        last = torch.cat([h_n[-2], h_n[-1]], dim=1)
        return self.head(pooled + last), padded, out_lengths


rng = np.random.default_rng(12)
seqs, labels = [], []
for _ in range(12):
    n = int(rng.integers(2, 7))
    label = int(rng.integers(0, 3))
    seqs.append(torch.tensor(rng.integers(1, 4, n) + 3 * label))
    labels.append(label)
tokens = rnn_utils.pad_sequence(seqs, batch_first=True)
lengths = torch.tensor([len(s) for s in seqs])
labels = torch.tensor(labels)
print(tokens.shape, tokens[:3], lengths, labels, tokens.dtype)
packed = rnn_utils.pack_padded_sequence(tokens, lengths, batch_first=True, enforce_sorted=False)
print(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices, packed.data.shape)
print(rnn_utils.pad_packed_sequence(packed, batch_first=True, total_length=8)[0][:2])
print(rnn_utils.pack_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])]).batch_sizes)

model = Classifier(12, 6, 5, 3)
print(model)
model.load_state_dict({k: torch.tensor(rng.normal(0, 0.4, tuple(v.shape)), dtype=torch.float32)
                       for k, v in model.state_dict().items()})
with torch.no_grad():
    model.embedding.weight[0].zero_()
criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01, alpha=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    model.train()
    for i in range(0, 12, 4):
        logits, padded, out_lengths = model(tokens[i:i + 4], lengths[i:i + 4])
        loss = criterion(logits, labels[i:i + 4])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    N(f"epoch {epoch} loss lr", loss, scheduler.get_last_lr()[0])
    print(padded.shape, out_lengths, padded.grad_fn is not None)
N("embedding pad row grad", model.embedding.weight.grad[0], model.embedding.weight[0])
model.eval()
with torch.no_grad():
    logits, padded, _ = model(tokens, lengths)
    pred = logits.argmax(dim=-1)
    N("probs", F.softmax(logits, dim=-1)[:3])
    print("padding stays zero", bool((padded[lengths < padded.size(1)][:, -1] == 0).all()))
    confusion = torch.zeros(3, 3, dtype=torch.long)
    confusion.index_put_((labels, pred), torch.ones_like(pred), accumulate=True)
    acc = (pred == labels).float().mean()
    print(confusion.sum(), confusion.diagonal().sum() == (pred == labels).sum(), acc.dtype)
    N("accuracy", acc)
