"""One DCGAN-style training step pair as in pytorch/examples' dcgan: ConvTranspose2d generator,
strided Conv2d discriminator with BatchNorm2d and LeakyReLU, BCELoss, two Adam optimizers,
fake.detach() for the discriminator step, weights_init applied with Module.apply."""

import sys

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn


def N(name, *ts):
    vals = []
    for t in ts:
        vals += np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).ravel().tolist()
    print("~", name, " ".join(f"{v:.6g}" for v in vals))


nz, ngf, ndf, nc = 4, 6, 6, 1
rng = np.random.default_rng(1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netG, netD = Generator(), Discriminator()
netG.apply(weights_init)
netD.apply(weights_init)
print(netG)
print(netD)
# replace the random init with NumPy-made weights so both frameworks start alike
for net in (netG, netD):
    sd = net.state_dict()
    new = {}
    for k, v in sd.items():
        if k.endswith("num_batches_tracked"):
            new[k] = v
        elif k.endswith("running_var") or (k.endswith("weight") and v.dim() == 1):
            new[k] = torch.tensor(1 + 0.02 * rng.standard_normal(tuple(v.shape)), dtype=v.dtype)
        else:
            new[k] = torch.tensor(0.2 * rng.standard_normal(tuple(v.shape)), dtype=v.dtype)
    net.load_state_dict(new)
print(sorted(netD.state_dict().keys()))
print(netD.state_dict()["main.3.num_batches_tracked"])
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0
real_all = torch.tensor(np.tanh(rng.standard_normal((3, 4, nc, 16, 16))), dtype=torch.float32)
noise_all = torch.tensor(rng.standard_normal((3, 4, nz, 1, 1)), dtype=torch.float32)
for i in range(3):
    netD.zero_grad()
    real_cpu = real_all[i]
    batch_size = real_cpu.size(0)
    label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype)
    output = netD(real_cpu)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    fake = netG(noise_all[i])
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    N(f"[{i}/3] Loss_D Loss_G D(x) D(G(z))", errD.item(), errG.item(), D_x, D_G_z1, D_G_z2)
    print(fake.shape, fake.grad_fn is not None, fake.detach().requires_grad, label.dtype)
N("bn running_mean", netG.main[1].running_mean)
N("bn running_var", netD.main[3].running_var)
print(netD.main[3].num_batches_tracked, netG.main[0].weight.grad.shape)
N("G grad", netG.main[6].weight.grad.flatten()[:6])
netG.eval()
with torch.no_grad():
    N("eval fake", netG(noise_all[0, :1]).flatten()[:8])
