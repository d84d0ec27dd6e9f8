"""One PNG of a run: loss and accuracy per epoch of both stages, and
``graphgrad.memory.allocated()`` per batch; with ``--leak``, the fine-tuning's memory with
``total += loss.item()`` and with ``total += loss`` side by side on one scale.
"""

from __future__ import annotations

import numpy as np


def plot_run(pretrain, finetune, path: str, leaky=None) -> str:
    """Writes the figure to ``path`` (matplotlib, Agg backend) and returns ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 8), layout="constrained")
    grid = fig.add_gridspec(2, 2)
    loss_ax, acc_ax = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    offset = 0
    for history, color in ((pretrain, "tab:blue"), (finetune, "tab:orange")):
        epochs = np.arange(1, len(history.epoch_loss) + 1) + offset
        loss_ax.plot(epochs, history.epoch_loss, "o-", color=color, label=history.name)
        acc_ax.plot(epochs, history.epoch_train_accuracy, "o-", color=color,
                    label=f"{history.name}: train")
        acc_ax.plot(epochs, history.epoch_val_accuracy, "s--", color=color,
                    label=f"{history.name}: held-out voices")
        offset += len(history.epoch_loss)
    for ax in (loss_ax, acc_ax):
        ax.axvline(len(pretrain.epoch_loss) + 0.5, color="gray", lw=0.8)
        ax.set_xlabel("epoch (pretraining, then fine-tuning with a new head)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    loss_ax.set_ylabel("cross-entropy")
    loss_ax.set_title("training loss")
    acc_ax.set_ylabel("accuracy")
    acc_ax.set_ylim(0, 1.02)
    acc_ax.set_title("accuracy")

    mib = 2.0 ** 20
    if leaky is None:
        ax = fig.add_subplot(grid[1, :])
        memory = np.array(pretrain.batch_memory + finetune.batch_memory) / mib
        ax.plot(memory, color="tab:green")
        ax.axvline(len(pretrain.batch_memory), color="gray", lw=0.8)
        ax.set_title("graphgrad.memory.allocated() after each step (total += loss.item())")
        ax.set_xlabel("batch (pretraining, then fine-tuning)")
        ax.set_ylim(0, memory.max() * 1.15)
        axes = [ax]
    else:
        left = fig.add_subplot(grid[1, 0])
        right = fig.add_subplot(grid[1, 1], sharey=left)
        for ax, history, color, title in (
                (left, finetune, "tab:green", "fine-tuning, total += loss.item()"),
                (right, leaky, "tab:red", "fine-tuning, total += loss (graphs kept alive)")):
            ax.plot(np.array(history.batch_memory) / mib, color=color)
            ax.set_title(title)
            ax.set_xlabel("batch")
        top = max(max(finetune.batch_memory), max(leaky.batch_memory)) / mib
        left.set_ylim(0, top * 1.15)
        axes = [left, right]
    for ax in axes:
        ax.set_ylabel("MiB allocated")
        ax.grid(alpha=0.3)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
