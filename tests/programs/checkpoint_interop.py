"""Checkpoints as torch programs use them: a whole module saved and loaded with
weights_only=False, the weights-only refusal and torch.serialization.safe_globals, views
sharing storage after a load, the legacy format, mmap and map_location, the archive's record
names, and the error for a missing directory."""

import io
import os
import pickle
import sys
import tempfile
import zipfile

import numpy as np

torch = __import__(sys.argv[1])
nn = torch.nn

rng = np.random.default_rng(5)
X = torch.tensor(rng.standard_normal((4, 3)).astype(np.float32))
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.LayerNorm(5), nn.Linear(5, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
d = tempfile.mkdtemp()
path = os.path.join(d, "model.pt")
torch.save(model, path)
try:
    torch.load(path)
except pickle.UnpicklingError as e:
    msg = str(e)
    print("refused:", "Weights only load failed" in msg,
          "GLOBAL torch.nn.modules.container.Sequential" in msg, "add_safe_globals" in msg)
print(sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path)))  # torch: set order
whole = torch.load(path, weights_only=False)
print(type(whole).__name__, [type(m).__name__ for m in whole])
print("~", whole(X).detach().numpy().round(5).tolist())
allowed = [nn.Sequential, nn.Linear, nn.ReLU, nn.LayerNorm]
with torch.serialization.safe_globals(allowed):
    again = torch.load(path)
print(type(again[0]).__name__, torch.equal(again[0].weight, model[0].weight))
print(sorted(n.split("/", 1)[1] for n in zipfile.ZipFile(path).namelist()
             if "/data/" not in n))

base = torch.arange(12.0).reshape(3, 4)
ck = {"base": base, "row": base[1], "col": base[:, 2], "t": base.t(),
      "param": nn.Parameter(torch.ones(2)), "size": torch.Size([2, 3])}
for legacy in (False, True):
    buf = io.BytesIO()
    torch.save(ck, buf, _use_new_zipfile_serialization=not legacy)
    buf.seek(0)
    back = torch.load(buf)
    back["base"][1, 2] = -7.0
    print(back["row"].tolist(), back["col"].tolist(), back["t"].stride(), back["t"][2].tolist())
    print(type(back["param"]).__name__, back["param"].requires_grad, back["size"],
          type(back["size"]).__name__)

sd_path = os.path.join(d, "sd.pth")
torch.save(model.state_dict(), sd_path)
seen = []
sd = torch.load(sd_path, map_location=lambda storage, loc: seen.append(loc) or storage)
print(len(seen), set(seen), list(sd)[:2])
mapped = torch.load(sd_path, mmap=True, map_location="cpu")
fresh = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.LayerNorm(5), nn.Linear(5, 2))
print(fresh.load_state_dict(mapped), "~", fresh(X).detach().numpy().round(5).tolist())
try:
    torch.save(model.state_dict(), os.path.join(d, "missing", "x.pt"))
except RuntimeError as e:
    print(type(e).__name__, str(e).replace(d, "<dir>"))
