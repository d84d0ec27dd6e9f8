"""What current official examples and small training scripts do on their first lines: pick a
device through torch.accelerator, probe the backends, set the global switches and seed, log
to TensorBoard, and use out= and the old positional overloads on the way."""

import importlib
import sys
import tempfile

torch = __import__(sys.argv[1])
nn = torch.nn
out = []


def P(*a):
    out.append(" ".join(str(x) for x in a))


device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() \
    else "cpu"
P("device", device, torch.cuda.is_available(), torch.backends.mps.is_available(),
  torch.xpu.is_available(), torch.accelerator.device_count())
use_cuda = torch.cuda.is_available()
use_mps = not use_cuda and torch.backends.mps.is_available() and torch.backends.mps.is_built()
P("device2", torch.device("cuda" if use_cuda else "mps" if use_mps else "cpu"))
torch.set_float32_matmul_precision("high")
torch.use_deterministic_algorithms(True)
threads = torch.get_num_threads()
torch.set_num_threads(1)
P("switches", torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(),
  torch.get_num_threads(), threads >= 1)
torch.set_num_threads(threads)
P("version", isinstance(torch.__version__, str), torch.version.cuda, torch.version.hip,
  type(torch.initial_seed()).__name__)

g = torch.manual_seed(1234)
P("seed", g.initial_seed(), torch.initial_seed())
x = torch.zeros(2, 3).to(device)
P("flags", x.device, x.is_cuda, x.is_mps, x.is_xpu, x.is_cpu)

# out= and the deprecated overloads
a = torch.arange(6.0).reshape(2, 3)
b = torch.full((2, 3), 0.5)
buf = torch.empty(0)
r = torch.add(a, b, out=buf)
P("~ out", r is buf, buf.tolist(), torch.matmul(a, b.T, out=torch.empty(2, 2)).tolist())
vals, idx = torch.empty(0), torch.empty(0, dtype=torch.long)
torch.max(a, 1, out=(vals, idx))
P("~ max out", vals.tolist(), idx.tolist())
c = a.clone()
c.add_(2, b)  # the deprecated add_(Number alpha, Tensor other)
P("~ deprecated", c.tolist(), torch.addmm(0.5, torch.ones(2, 2), 2.0, a, b.T).tolist())

# a short training loop logged to TensorBoard, read back with TensorBoard's reader
tb = importlib.import_module(sys.argv[1] + ".utils.tensorboard")
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.fill_(0.1)
    model.bias.zero_()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
xs = torch.arange(12.0).reshape(4, 3) / 10
ys = xs.sum(1, keepdim=True)
with tempfile.TemporaryDirectory() as d:
    writer = tb.SummaryWriter(d)
    for step in range(5):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xs), ys)
        loss.backward()
        opt.step()
        writer.add_scalar("loss", loss.item(), step)
    writer.add_histogram("weight", model.weight, 4)
    writer.add_text("note", "done", 4)
    writer.close()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(d)
    acc.Reload()
    P("~ tb loss", [round(e.value, 6) for e in acc.Scalars("loss")])
    h = acc.Histograms("weight")[0].histogram_value
    P("~ tb hist", h.num, round(h.sum, 6), round(h.min, 6), round(h.max, 6))
    P("tb text", acc.Tensors("note/text_summary")[0].tensor_proto.string_val)

print("\n".join(out))
