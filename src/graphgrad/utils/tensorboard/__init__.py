"""``graphgrad.utils.tensorboard``: torch.utils.tensorboard's ``SummaryWriter`` on the
``tensorboard`` package (graphgrad's optional extra ``tensorboard``); importing this module
without it raises ImportError naming the extra, as torch's does."""

from __future__ import annotations

from ._proto import tb as _tb

_tb()

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
