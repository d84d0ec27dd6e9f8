"""The training loop of the keyword-spotting example, for pretraining and for fine-tuning, and
its ``--leak`` twin that logs ``total_loss += loss`` instead of ``total_loss += loss.item()``.

Each batch records ``graphgrad.memory.allocated()``; warnings (the graph-retention detector's)
are printed as they come, above the progress bars.
"""

from __future__ import annotations

import gc
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

import graphgrad as torch
from graphgrad import distributed as dist
from graphgrad import nn
from graphgrad.nn.parallel import DistributedDataParallel
from graphgrad.utils.data import DataLoader, Dataset, DistributedSampler

from . import data
from .features import batch_log_mel


class ArrayDataset(Dataset):
    """Features and labels kept as NumPy arrays: only the batch in use becomes a tensor, so
    ``memory.allocated()`` shows the training loop's memory, not the data set's."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def features(clips: data.Clips, rng, noises=()) -> np.ndarray:
    """Log-mel features (N, 40, 51) of every clip, shifted and noised with ``rng``."""
    return batch_log_mel(data.place(clips, range(len(clips)), rng, noises))


def accuracy(model, x: np.ndarray, y: np.ndarray, batch_size: int = 256) -> float:
    """Accuracy of ``model`` on ``(x, y)``; with several ranks each scores every world-size-th
    example and the counts are summed, so every rank returns the same figure."""
    rank, world = rank_and_world()
    x, y = x[rank::world], y[rank::world]
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(y), batch_size):
            logits = model(torch.from_numpy(x[i:i + batch_size]))
            correct += (logits.argmax(dim=1) == torch.from_numpy(y[i:i + batch_size])).sum().item()
    model.train()
    correct, n = sum_over_ranks(correct, len(y))
    return correct / max(n, 1)


def rank_and_world() -> tuple[int, int]:
    """(rank, world size) of the process group, (0, 1) without one."""
    if not dist.is_initialized():
        return 0, 1
    return dist.get_rank(), dist.get_world_size()


def sum_over_ranks(*values) -> list:
    """``values`` summed over every rank (as they are with one)."""
    if rank_and_world()[1] == 1:
        return list(values)
    t = torch.tensor([float(v) for v in values], dtype=torch.float64)
    dist.all_reduce(t)
    return t.tolist()


@dataclass
class History:
    name: str
    leak: bool
    batch_loss: list = field(default_factory=list)
    batch_memory: list = field(default_factory=list)     # memory.allocated() after each step
    epoch_loss: list = field(default_factory=list)
    epoch_train_accuracy: list = field(default_factory=list)
    epoch_val_accuracy: list = field(default_factory=list)
    test_accuracy: float = float("nan")
    seconds: float = 0.0
    warnings: list = field(default_factory=list)


def _progress(iterable, enabled: bool, **kwargs):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm
    return tqdm(iterable, **kwargs)


def _say(message: str, progress: bool) -> None:
    """Prints above the progress bars (tqdm.write), or plainly without them."""
    if progress:
        from tqdm.auto import tqdm
        tqdm.write(message)
    else:
        print(message, flush=True)


def _epoch_loader(train_clips: data.Clips, epoch: int, seed: int, batch_size: int, noises):
    """This epoch's augmented features as a DataLoader. One rank: every clip, shuffled. Several:
    a DistributedSampler's shard (so each rank computes the features of its clips only) in
    batches of ``batch_size / world size``, so a step still sees ``batch_size`` clips."""
    rank, world = rank_and_world()
    if world == 1:
        x = features(train_clips, np.random.default_rng([seed, epoch]), noises)
        return DataLoader(ArrayDataset(x, train_clips.labels), batch_size=batch_size,
                          shuffle=True, generator=torch.Generator().manual_seed(seed + epoch))
    sampler = DistributedSampler(range(len(train_clips)), world, rank, shuffle=True, seed=seed)
    sampler.set_epoch(epoch)
    index = np.fromiter(sampler, dtype=np.int64, count=len(sampler))
    rng = np.random.default_rng([seed, epoch, rank])
    x = batch_log_mel(data.place(train_clips, index, rng, noises))
    return DataLoader(ArrayDataset(x, train_clips.labels[index]),
                      batch_size=max(batch_size // world, 1), shuffle=False)


def train_stage(model, optimizer, train_clips: data.Clips, val: tuple, *, name: str,
                epochs: int, batch_size: int, seed: int, leak: bool = False, noises=(),
                progress: bool = True) -> History:
    """Trains ``model`` for ``epochs`` on fresh augmentations of ``train_clips`` each epoch.

    In a process group of several ranks, the model trains wrapped in DistributedDataParallel,
    each rank on its shard; the figures of the History are summed over the ranks, except
    ``batch_loss`` and ``batch_memory`` (this rank's)."""
    history = History(name, leak)
    rank, world = rank_and_world()
    # The previous stage's DistributedDataParallel wrapper is cyclic garbage holding gradient
    # arrays; collect it now, so that Python's collector running mid-epoch does not show up as
    # a drop in this stage's "memory per batch".
    gc.collect()
    progress = progress and rank == 0
    # gradient_as_bucket_view: the same gradient buckets every step (docs/distributed.md).
    net = model if world == 1 else DistributedDataParallel(model, gradient_as_bucket_view=True)
    loss_fn = nn.CrossEntropyLoss()
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    torch.memory.reset_retention_check()
    start = time.perf_counter()
    total_loss, seen = 0.0, 0       # summed over the stage; the bars show its running mean
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", torch.memory.GraphRetentionWarning)
        for epoch in range(1, epochs + 1):
            loader = _epoch_loader(train_clips, epoch, seed, batch_size, noises)
            epoch_start_loss, epoch_start_seen, correct = float(total_loss), seen, 0
            first_batch = len(history.batch_memory)
            bar = _progress(loader, progress, desc=f"{name} {epoch}/{epochs}", unit="batch",
                            leave=True)
            for xb, yb in bar:
                optimizer.zero_grad()
                logits = net(xb)
                loss = loss_fn(logits, yb)
                loss.backward()
                optimizer.step()
                if leak:
                    total_loss += loss * len(yb)    # the bug: each `loss` keeps its graph
                else:
                    total_loss += loss.item() * len(yb)
                seen += len(yb)
                correct += (logits.argmax(dim=1) == yb).sum().item()
                history.batch_loss.append(loss.item())
                history.batch_memory.append(torch.memory.allocated())
                for w in caught[len(history.warnings):]:
                    history.warnings.append(w)
                    if rank == 0:
                        _say(warnings.formatwarning(w.message, w.category, w.filename,
                                                    w.lineno), progress)
                if progress:
                    n = seen - epoch_start_seen
                    bar.set_postfix(loss=f"{(float(total_loss) - epoch_start_loss) / n:.3f}",
                                    acc=f"{correct / n:.1%}",
                                    mem=f"{history.batch_memory[-1] / 1024:.0f}KiB")
            scheduler.step()
            epoch_loss, correct, n = sum_over_ranks(float(total_loss) - epoch_start_loss,
                                                     correct, seen - epoch_start_seen)
            history.epoch_loss.append(epoch_loss / n)
            history.epoch_train_accuracy.append(correct / n)
            history.epoch_val_accuracy.append(accuracy(model, *val) if len(val[1]) else np.nan)
            memory = history.batch_memory[first_batch:]
            if rank == 0:
                _say(f"[{name}] epoch {epoch}/{epochs}: train loss {history.epoch_loss[-1]:.3f}, "
                     f"train accuracy {history.epoch_train_accuracy[-1]:.1%}, held-out voices "
                     f"{history.epoch_val_accuracy[-1]:.1%}; memory per batch "
                     f"{memory[0] / 1024:.0f} -> {memory[-1] / 1024:.0f} KiB", progress)
    history.seconds = time.perf_counter() - start
    return history


def make_optimizer(model, lr: float, body_lr: float | None = None):
    """AdamW; fine-tuning gives the pretrained body a smaller step than the new head."""
    if body_lr is None:
        return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-3)
    return torch.optim.AdamW([{"params": model.features.parameters(), "lr": body_lr},
                              {"params": model.head.parameters(), "lr": lr}],
                             weight_decay=1e-3)
