"""Handwritten digits: an MLP and a small CNN trained on scikit-learn's bundled 8x8 digits.

Run ``python -m graphgrad.examples.digits [--model mlp|cnn|both] [--epochs N] [--seed S]
[--framework graphgrad|torch] [--quick] [--save-dir DIR]``. The training code is plain PyTorch;
the one line that differs between the two frameworks is the import in ``load_framework``.
Needs scikit-learn for the data (``pip install graphgrad[examples]``); it reads no network.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

EPOCHS = {"mlp": 20, "cnn": 12}
QUICK_EPOCHS = {"mlp": 8, "cnn": 5}
BATCH_SIZE = 32
LR = 1e-2


def load_framework(name: str):
    """The one-import switch: the rest of the file only ever says ``torch``."""
    if name == "torch":
        import torch
    else:
        import graphgrad as torch
    return torch


def load_data():
    """The 1,797 digits as float32 arrays, a fixed stratified 75/25 split, standardised with the
    training set's mean and standard deviation (one scalar each, so images keep their shape)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, stratify=y, random_state=0)
    mean, std = x_train.mean(), x_train.std()
    x_train = ((x_train - mean) / std).astype(np.float32)
    x_test = ((x_test - mean) / std).astype(np.float32)
    return x_train, y_train.astype(np.int64), x_test, y_test.astype(np.int64)


def build_model(torch, kind: str):
    nn = torch.nn
    if kind == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(64, 128), nn.ReLU(),
            nn.Linear(128, 64), nn.ReLU(),
            nn.Linear(64, 10),
        )
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 10),
    )


def accuracy(torch, model, x, y) -> float:
    model.eval()
    with torch.no_grad():
        predicted = model(x).argmax(dim=1)
    model.train()
    return (predicted == y).float().mean().item()


def train(torch, kind: str, data, epochs: int, seed: int, verbose: bool = True) -> dict:
    """Trains one model with Adam on shuffled mini-batches; returns its losses and accuracy."""
    from_numpy = torch.from_numpy
    x_train, y_train, x_test, y_test = data
    x_train, x_test = from_numpy(x_train), from_numpy(x_test)
    # Both models see images of 1x8x8; the MLP flattens them itself.
    x_train, x_test = x_train.reshape(-1, 1, 8, 8), x_test.reshape(-1, 1, 8, 8)
    y_train, y_test = from_numpy(y_train), from_numpy(y_test)

    torch.manual_seed(seed)
    model = build_model(torch, kind)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    # Annealing the step size to zero lets the last epochs settle instead of jittering.
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x_train, y_train), batch_size=BATCH_SIZE, shuffle=True,
        generator=torch.Generator().manual_seed(seed))

    losses, accuracies = [], []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        total, count = 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
            count += len(yb)
        scheduler.step()
        losses.append(total / count)
        accuracies.append(accuracy(torch, model, x_test, y_test))
        if verbose:
            print(f"[{kind}] epoch {epoch:3d}  train loss {losses[-1]:.4f}  "
                  f"test accuracy {accuracies[-1]:.2%}")
    seconds = time.perf_counter() - start
    if verbose:
        print(f"[{kind}] final test accuracy {accuracies[-1]:.2%} "
              f"({epochs} epochs, {seconds:.1f} s)")
    return {"model": model, "losses": losses, "accuracies": accuracies,
            "test_accuracy": accuracies[-1], "seconds": seconds, "x_test": x_test,
            "y_test": y_test}


def save_and_reload(torch, kind: str, result: dict, directory: str, verbose: bool = True):
    """Writes the state dict with ``torch.save`` and evaluates a fresh model loaded from it."""
    path = os.path.join(directory, f"digits_{kind}.pt")
    torch.save(result["model"].state_dict(), path)
    restored = build_model(torch, kind)
    restored.load_state_dict(torch.load(path))
    acc = accuracy(torch, restored, result["x_test"], result["y_test"])
    if verbose:
        print(f"[{kind}] saved to {path}; reloaded model's test accuracy {acc:.2%}")
    return path, acc


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("mlp", "cnn", "both"), default="both")
    ap.add_argument("--epochs", type=int, default=None,
                    help=f"epochs per model (default {EPOCHS}, quick {QUICK_EPOCHS})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--framework", choices=("graphgrad", "torch"), default="graphgrad")
    ap.add_argument("--quick", action="store_true", help="fewer epochs, for smoke tests")
    ap.add_argument("--save-dir", default=None,
                    help="where to write the trained models (default: a temporary directory)")
    ap.add_argument("--quiet", action="store_true", help="print only the final accuracies")
    args = ap.parse_args(argv)

    torch = load_framework(args.framework)
    data = load_data()
    kinds = ("mlp", "cnn") if args.model == "both" else (args.model,)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.save_dir or tmp
        os.makedirs(directory, exist_ok=True)
        for kind in kinds:
            epochs = args.epochs or (QUICK_EPOCHS if args.quick else EPOCHS)[kind]
            result = train(torch, kind, data, epochs, args.seed, verbose=not args.quiet)
            result["path"], result["reloaded_accuracy"] = save_and_reload(
                torch, kind, result, directory, verbose=not args.quiet)
            print(f"{args.framework} {kind}: test accuracy {result['test_accuracy']:.2%}")
            results[kind] = result
    return results


if __name__ == "__main__":
    main()
