"""A seq2seq GRU encoder/decoder with attention and teacher forcing, as in the official
"NLP From Scratch: Translation with a Sequence to Sequence Network and Attention" tutorial."""

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


SOS_token, EOS_token, MAX_LENGTH = 0, 1, 6


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(0.0)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        return self.gru(embedded)


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input)
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        return self.out(output), hidden, attn_weights


rng = np.random.default_rng(11)
src = rng.integers(2, 9, (5, MAX_LENGTH))
src[:, -1] = EOS_token
tgt = np.flip(src[:, :-1], 1).copy()
tgt = np.concatenate([tgt, np.full((5, 1), EOS_token)], 1)
input_tensor, target_tensor = torch.tensor(src), torch.tensor(tgt)
encoder, decoder = EncoderRNN(9, 10), AttnDecoderRNN(10, 9)
for net in (encoder, decoder):
    net.load_state_dict({k: torch.tensor(rng.uniform(-0.4, 0.4, v.shape), dtype=torch.float32)
                         for k, v in net.state_dict().items()})
print(encoder, decoder, sep="\n")
enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(1, 6):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden, target_tensor)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    N(f"epoch {epoch} loss", loss)
    print(encoder_outputs.shape, encoder_hidden.shape, attn.shape, decoder_outputs.dtype)
N("attn row sums", attn.sum(-1)[0])
with torch.no_grad():
    encoder_outputs, encoder_hidden = encoder(input_tensor[:2])
    decoder_outputs, decoder_hidden, attn = decoder(encoder_outputs, encoder_hidden)
    _, topi = decoder_outputs.topk(1)
    decoded_ids = topi.squeeze()
    print(decoded_ids.shape, decoded_ids.dtype)
    N("eval logp", decoder_outputs.max(-1).values)
    N("eval attn", attn[0, 0])
