"""The official quickstart and pytorch/examples' mnist, on synthetic 8x8 images: a CNN with
Conv2d/Dropout2d/max_pool2d/flatten, train() and test() loops printing the loss tensor itself
(grad_fn in its repr) and with format specs, Adadelta with StepLR, and the tutorial's
autograd warm-up (print(z.grad_fn), loss.backward(), w.grad)."""

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


# the autograd tutorial's warm-up
x = torch.ones(5)
y = torch.zeros(3)
w = torch.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=torch.float32, requires_grad=True)
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = F.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}".split(" object")[0])
print(f"Gradient function for loss = {loss.grad_fn}".split(" object")[0])
print(loss, z)
loss.backward()
print(w.grad, b.grad)
with torch.no_grad():
    print((torch.matmul(x, w) + b).requires_grad, z.detach().requires_grad)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout2d(0.0)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


rng = np.random.default_rng(8)
images = rng.standard_normal((48, 1, 8, 8)).astype(np.float32)
targets = rng.integers(0, 3, 48)
images[np.arange(48), 0, targets * 2, :] += 2.0  # a class-dependent bright row
images, targets = torch.from_numpy(images), torch.from_numpy(targets)
train_set = torch.utils.data.TensorDataset(images[:36], targets[:36])
test_set = torch.utils.data.TensorDataset(images[36:], targets[36:])
train_loader = torch.utils.data.DataLoader(train_set, batch_size=12)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=6)
model = Net()
print(model)
model.load_state_dict({k: torch.tensor(rng.normal(0, 0.3, tuple(v.shape)), dtype=torch.float32)
                       for k, v in model.state_dict().items()})
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 2 == 0:
            print(f"~ Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)} "
                  f"({100. * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}")
    print("last loss", repr(loss).split("(")[0], loss.grad_fn.name(), loss.shape, loss.dtype)


def test():
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(f"~ Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/"
          f"{len(test_loader.dataset)} ({100. * correct / len(test_loader.dataset):.0f}%)")


for epoch in range(1, 4):
    train(epoch)
    test()
    scheduler.step()
    print("lr", round(optimizer.param_groups[0]["lr"], 6))
loss_fn = nn.CrossEntropyLoss()
logits = model.fc2(torch.ones(2, 16))
loss = loss_fn(logits, torch.tensor([0, 2]))
print(loss.grad_fn.name(), F.mse_loss(logits, torch.zeros(2, 3)).grad_fn.name(),
      nn.BCELoss()(logits.sigmoid(), torch.ones(2, 3)).grad_fn.name(),
      nn.SmoothL1Loss()(logits, torch.zeros(2, 3)).grad_fn.name(),
      nn.NLLLoss(reduction="none")(logits.log_softmax(1), torch.tensor([1, 1])).grad_fn.name())
print(f"loss: {loss:>7f}".startswith("loss: "), f"{loss.item():>7f}" == f"{loss:>7f}")
N("final", loss, model.conv1.weight.grad.flatten()[:4])
