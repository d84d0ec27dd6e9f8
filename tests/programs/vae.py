"""A variational autoencoder on synthetic binary images, as in pytorch/examples' vae: the
reparameterisation trick, BCE + KL loss, Adam, eval under no_grad and sampling the decoder."""

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


class VAE(nn.Module):
    def __init__(self, d_in=16, d_h=12, d_z=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_h)
        self.fc21 = nn.Linear(d_h, d_z)
        self.fc22 = nn.Linear(d_h, d_z)
        self.fc3 = nn.Linear(d_z, d_h)
        self.fc4 = nn.Linear(d_h, d_in)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 16))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld, bce, kld


rng = np.random.default_rng(0)
data = (rng.random((64, 1, 4, 4)) > 0.5).astype(np.float32)
noise = rng.standard_normal((8, 16, 3)).astype(np.float32)
model = VAE()
print(model)
state = {k: torch.tensor(rng.normal(0, 0.3, tuple(v.shape)).astype(np.float32))
         for k, v in model.state_dict().items()}
print(model.load_state_dict(state))
print([(k, tuple(v.shape), v.dtype) for k, v in model.state_dict().items()])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x_all = torch.from_numpy(data)
for epoch in range(2):
    model.train()
    train_loss = 0.0
    for batch_idx in range(4):
        x = x_all[batch_idx * 16:(batch_idx + 1) * 16]
        eps = torch.from_numpy(noise[epoch * 4 + batch_idx])
        optimizer.zero_grad()
        recon, mu, logvar = model(x, eps)
        loss, bce, kld = loss_function(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % 2 == 0:
            N(f"epoch {epoch} batch {batch_idx}", loss, bce, kld)
            print(recon.shape, mu.grad_fn is not None, loss.requires_grad, type(loss.item()))
    N(f"epoch {epoch} avg", train_loss / 64)

model.eval()
with torch.no_grad():
    recon, mu, logvar = model(x_all[:8], torch.zeros(8, 3))
    test_loss = loss_function(recon, x_all[:8], mu, logvar)[0].item()
    N("test", test_loss)
    sample = model.decode(torch.from_numpy(noise[0, :4]))
    N("sample", sample[:, :5])
    print(sample.requires_grad, sample.view(4, 1, 4, 4).shape, recon.grad_fn)
    pred = (recon > 0.5).float()
    print("pixels right", int((pred == x_all[:8].view(8, -1)).sum()), "of", pred.numel())
N("fc1 grad", model.fc1.weight.grad[0])
N("adam state", optimizer.state[model.fc4.bias]["exp_avg_sq"][:4])
print(optimizer.state[model.fc4.bias]["step"], sorted(optimizer.state_dict()["param_groups"][0]))
