"""Idioms from the official tutorials: FGSM adversarial examples (data.requires_grad = True,
data.grad.sign()), neural style transfer (gram matrices, LBFGS optimising the input image,
clamp_ under no_grad), DQN (gather on actions, max(1).values, SmoothL1Loss, clip_grad_value_,
soft target update through state_dict) and time-sequence prediction (LSTMCell in float64)."""

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


def load(module, rng, scale=0.3):
    module.load_state_dict({k: torch.tensor(rng.normal(0, scale, tuple(v.shape)), dtype=v.dtype)
                            for k, v in module.state_dict().items()})
    return module


rng = np.random.default_rng(21)
# FGSM
net = load(nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)), rng)
net.eval()
data = torch.tensor(rng.random((4, 6)), dtype=torch.float32)
target = torch.tensor([0, 1, 2, 1])
data.requires_grad = True
output = net(data)
init_pred = output.max(1, keepdim=True)[1]
loss = F.nll_loss(F.log_softmax(output, dim=1), target)
net.zero_grad()
loss.backward()
data_grad = data.grad.data
for epsilon in [0, 0.05, 0.3]:
    perturbed = torch.clamp(data + epsilon * data_grad.sign(), 0, 1)
    final_pred = net(perturbed).max(1, keepdim=True)[1]
    print(epsilon, init_pred.flatten().tolist(), final_pred.flatten().tolist(),
          perturbed.requires_grad, perturbed.grad_fn.name())
N("fgsm grad sign", data_grad.sign()[0], data_grad[0])

# style transfer
def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        self.loss = F.mse_loss(gram_matrix(input), self.target)
        return input


# float64 and few iterations: LBFGS without line search amplifies float32 rounding
conv = load(nn.Conv2d(3, 4, 3, padding=1).double(), rng)
style_img = torch.tensor(rng.random((1, 3, 6, 6)))
content_img = torch.tensor(rng.random((1, 3, 6, 6)))
style_loss = StyleLoss(conv(style_img))
content_target = conv(content_img).detach()
input_img = content_img.clone()
input_img.requires_grad_(True)
conv.requires_grad_(False)
optimizer = torch.optim.LBFGS([input_img], max_iter=5)
print(style_loss.target.requires_grad, input_img.is_leaf, conv.weight.requires_grad)
for run in range(3):
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        feats = style_loss(conv(input_img))
        loss = 1e4 * style_loss.loss + F.mse_loss(feats, content_target)
        loss.backward()
        return loss
    out = optimizer.step(closure)
    N(f"style run {run}", out, style_loss.loss)
with torch.no_grad():
    input_img.clamp_(0, 1)
N("styled", input_img[0, 0, 0])

# DQN
policy_net = load(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)), rng)
target_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
target_net.load_state_dict(policy_net.state_dict())
optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-3, amsgrad=True)
GAMMA, TAU = 0.99, 0.005
for step in range(3):
    state_batch = torch.tensor(rng.standard_normal((8, 4)), dtype=torch.float32)
    action_batch = torch.tensor(rng.integers(0, 2, (8, 1)))
    reward_batch = torch.tensor(rng.random(8), dtype=torch.float32)
    next_states = torch.tensor(rng.standard_normal((8, 4)), dtype=torch.float32)
    non_final_mask = torch.tensor(rng.random(8) > 0.2, dtype=torch.bool)
    non_final_next_states = torch.cat([s[None] for s, m in zip(next_states, non_final_mask) if m])
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(8)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    target_net_state_dict = target_net.state_dict()
    policy_net_state_dict = policy_net.state_dict()
    for key in policy_net_state_dict:
        target_net_state_dict[key] = (policy_net_state_dict[key] * TAU
                                      + target_net_state_dict[key] * (1 - TAU))
    target_net.load_state_dict(target_net_state_dict)
    N(f"dqn {step}", loss, state_action_values[:3], target_net[0].bias[:3])
    print(loss, non_final_mask.sum().item(), state_action_values.shape)

# time sequence prediction
class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 8)
        self.linear = nn.Linear(8, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 8, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 8, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        return torch.cat(outputs, dim=1)


wave = np.sin(np.arange(12)[None, :] / 2.0 + np.arange(3)[:, None])
inp, tgt = torch.from_numpy(wave[:, :-1]), torch.from_numpy(wave[:, 1:])
seq = load(Sequence(), rng).double()
print(seq.lstm1, seq.linear.weight.dtype)
criterion = nn.MSELoss()
optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8)
for i in range(2):
    def closure():
        optimizer.zero_grad()
        loss = criterion(seq(inp), tgt)
        loss.backward()
        return loss
    N(f"lbfgs step {i}", optimizer.step(closure))
with torch.no_grad():
    pred = seq(inp[:1], future=3)
    N("future", pred[0, -4:])
    print(pred.shape, pred.dtype)
