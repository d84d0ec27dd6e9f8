"""A small convolutional keyword spotter: four conv-batchnorm-ReLU blocks over a log-mel image,
global average pooling, and a linear head that fine-tuning replaces.
"""

from __future__ import annotations

import graphgrad as torch
from graphgrad import nn


def conv_block(in_channels: int, out_channels: int) -> nn.Sequential:
    # No conv bias: the batch norm right after it has one.
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())


class KeywordSpotter(nn.Module):
    """(N, n_mels, frames) log-mel features -> (N, n_classes) logits.

    The features are standardised inside the model with ``mean`` and ``std`` buffers (set from
    the pretraining data), so a checkpoint carries everything ``predict`` needs.

    >>> model = KeywordSpotter(n_classes=3, width=4)
    >>> model(torch.zeros(2, 40, 51)).shape
    torch.Size([2, 3])
    """

    def __init__(self, n_classes: int, width: int = 16, dropout: float = 0.2):
        super().__init__()
        w = width
        self.register_buffer("mean", torch.tensor(0.0))
        self.register_buffer("std", torch.tensor(1.0))
        self.features = nn.Sequential(
            conv_block(1, w), nn.MaxPool2d(2),
            conv_block(w, 2 * w), nn.MaxPool2d(2),
            conv_block(2 * w, 4 * w), nn.MaxPool2d(2),
            conv_block(4 * w, 4 * w),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(4 * w, n_classes))

    def forward(self, x):
        x = (x - self.mean) / self.std
        return self.head(self.features(x.unsqueeze(1)))

    def replace_head(self, n_classes: int) -> None:
        """A fresh linear layer for new words; the convolutional body keeps what it learnt."""
        self.head[1] = nn.Linear(self.head[1].in_features, n_classes)
