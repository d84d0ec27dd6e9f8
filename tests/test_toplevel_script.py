"""A typical CPU training script's preamble and loop, run unchanged on torch and graphgrad."""

import warnings

import numpy as np
import torch

import graphgrad as gg


def script(torch):
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.set_num_threads(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = torch.cuda.is_available()
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    model = torch.nn.Linear(3, 1).to(device)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.2, -0.4, 0.1]]))
        model.bias.fill_(0.05)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.FloatTensor([[1, 2, 3], [0.5, -1, 2], [-2, 0, 1], [1, 1, 1]])
    y = torch.FloatTensor([[1], [0], [-1], [0.5]])
    losses = []
    for _ in range(5):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    assert isinstance(loss, torch.FloatTensor) and loss.type() == "torch.FloatTensor"
    torch.testing.assert_close(model.weight.grad.abs().sum() >= 0, torch.tensor(True))
    return losses, model.weight.detach().tolist(), torch.finfo(torch.float32).eps


def test_script_runs_the_same():
    saved = torch.get_num_threads(), gg.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want, got = script(torch), script(gg)
        finally:
            torch.set_num_threads(saved[0])
            gg.set_num_threads(saved[1])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    assert got[2] == want[2]
