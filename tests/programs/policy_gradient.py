"""REINFORCE as in pytorch/examples' reinforcement_learning/reinforce.py on a toy bandit-like
environment: Categorical(probs) log_prob and entropy, discounted returns normalised with
eps, saved log-probs, policy loss via torch.cat(...).sum(), plus Normal and Bernoulli."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn
F = torch.nn.functional
Categorical = torch.distributions.Categorical


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


rng = np.random.default_rng(2)
policy = Policy()
policy.load_state_dict({k: torch.tensor(rng.normal(0, 0.5, tuple(v.shape)), dtype=torch.float32)
                        for k, v in policy.state_dict().items()})
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()
gamma = 0.99


def select_action(state, u):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    # sample with NumPy's uniform so both frameworks pick the same action
    action = torch.tensor([int(u > probs[0, 0].item())])
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item(), m


def finish_episode():
    R = 0
    policy_loss, returns = [], []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss, returns


for i_episode in range(4):
    state = rng.standard_normal(4)
    ep_reward = 0
    for _ in range(6):
        action, m = select_action(state, rng.random())
        state = state + (0.1 if action else -0.1) * rng.standard_normal(4)
        reward = float(action == (state.sum() > 0))
        policy.rewards.append(reward)
        ep_reward += reward
    N(f"episode {i_episode} entropy probs", m.entropy(), m.probs)
    loss, returns = finish_episode()
    N(f"episode {i_episode} loss returns", loss, returns)
    print(i_episode, ep_reward, loss.shape, returns.dtype, m.logits.shape, m.batch_shape,
          m.event_shape)

logits = torch.tensor(rng.standard_normal((3, 4)), dtype=torch.float32, requires_grad=True)
d = Categorical(logits=logits)
a = torch.tensor([0, 3, 1])
lp = d.log_prob(a)
N("categorical", lp, d.entropy(), d.probs.sum(-1), d.logits[0])
(lp.sum() + d.entropy().mean()).backward()
N("logits grad", logits.grad)
print(d.sample().shape, d.sample((5,)).shape, d.param_shape if hasattr(d, "param_shape") else 0)
mu = torch.tensor([0.0, 1.0], requires_grad=True)
sigma = torch.tensor([1.0, 0.5], requires_grad=True)
n = torch.distributions.Normal(mu, sigma)
v = torch.tensor([0.3, 0.7])
N("normal", n.log_prob(v), n.entropy(), n.mean, n.stddev, n.variance, n.cdf(v))
n.log_prob(v).sum().backward()
N("normal grads", mu.grad, sigma.grad)
print(n.rsample().requires_grad, n.sample().requires_grad, n.sample((3,)).shape)
b = torch.distributions.Bernoulli(probs=torch.tensor([0.2, 0.9]))
N("bernoulli", b.log_prob(torch.tensor([1.0, 0.0])), b.entropy(), b.mean)
kl = torch.distributions.kl_divergence(n, torch.distributions.Normal(0.0, 1.0))
N("kl", kl)
print(repr(n), repr(b), repr(d))
