"""``torch.nn.utils.rnn``: ``PackedSequence`` and the functions that pack, pad and unpad batches of
variable-length sequences. Packing and padding are gathers with index arrays computed once in
NumPy from the lengths, so they are differentiable through graphgrad's indexing op.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ..._tensor import Tensor
from ...ops.creation import as_tensor, full
from ...ops.movement import cat, stack

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data of a batch of sequences, time-major (step 0 of every sequence, then step 1 of
    those still running, ...), with ``batch_sizes`` (how many run at each step, CPU int64) and the
    permutation that sorted the batch by decreasing length.

    >>> import graphgrad as torch
    >>> from graphgrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])])
    >>> p.data, p.batch_sizes
    (tensor([1, 4, 2, 3]), tensor([2, 1, 1]))
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_init_args(data, batch_sizes, sorted_indices,
                                                unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        """``self.data.to(...)``; ``self`` when nothing changes, as torch's."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        # Indices follow the data's device (always the CPU here).
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cuda(self, *args, **kwargs):
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_dtypes().float64)

    def float(self):
        return self.to(dtype=_dtypes().float32)

    def half(self):
        return self.to(dtype=_dtypes().float16)

    def long(self):
        return self.to(dtype=_dtypes().int64)

    def int(self):
        return self.to(dtype=_dtypes().int32)

    def short(self):
        return self.to(dtype=_dtypes().int16)

    def char(self):
        return self.to(dtype=_dtypes().int8)

    def byte(self):
        return self.to(dtype=_dtypes().uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _dtypes():
    from ... import _dtype

    return _dtype


def _init_args(data, batch_sizes, sorted_indices, unsorted_indices):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                "created manually. They should be instantiated by functions like pack_sequence "
                "and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse of a permutation of ``0..n-1`` (None stays None)."""
    if permutation is None:
        return None
    p = permutation._data
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=p.dtype)
    return as_tensor(out)


# -- index arrays ---------------------------------------------------------------------------------
def _lengths_from_batch_sizes(batch_sizes):
    """Sorted (decreasing) lengths of the sequences of a packed batch, as an int64 array."""
    bs = np.asarray(batch_sizes, dtype=np.int64)
    return (bs[None, :] > np.arange(bs[0])[:, None]).sum(1)


def _packed_positions(lengths, T):
    """(t, b) of every packed element in packed order, for decreasing ``lengths``."""
    return np.nonzero(np.arange(T)[:, None] < lengths[None, :])


def _padded_index(lengths, T):
    """(T, B) map of a padded batch onto packed rows; padding points at row ``n`` (one past)."""
    t, b = _packed_positions(lengths, T)
    index = np.full((T, lengths.size), t.size, dtype=np.int64)
    index[t, b] = np.arange(t.size)
    return index


def _pad_data(data, lengths, T, padding_value=0.0):
    """Packed ``data`` (n, *) as a padded (T, B, *) tensor in the packed (sorted) order."""
    pad = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    return cat([data, pad], 0)[as_tensor(_padded_index(lengths, T))]


def _pack_data(padded, lengths):
    """A padded (T, B, *) tensor in sorted order as packed data (n, *)."""
    t, b = _packed_positions(lengths, padded.shape[0])
    return padded[as_tensor(t), as_tensor(b)]


# -- public functions -----------------------------------------------------------------------------
def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences with the
    given lengths; ``enforce_sorted=False`` sorts them, recording the permutation.

    >>> import graphgrad as torch
    >>> from graphgrad.nn.utils.rnn import pack_padded_sequence
    >>> pack_padded_sequence(torch.tensor([[1, 2], [3, 0]]), [2, 1]).batch_sizes
    tensor([2, 1])
    """
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D cpu Long "
                               "tensor")
        lens = lengths._data.astype(np.int64)
    else:
        lens = np.asarray(lengths, dtype=np.int64)
        if lens.ndim != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lens.ndim}D cpu Long tensor")
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = as_tensor(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    B = input.shape[1] if input.dim() > 1 else None
    if input.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if lens.size != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={B})")
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lens.size and lens[0] > input.shape[0]:
        raise RuntimeError(f"a sequence length ({lens[0]}) is longer than the padded input "
                           f"({input.shape[0]} steps)")
    T = int(lens[0]) if lens.size else 0
    batch_sizes = (lens[None, :] > np.arange(T)[:, None]).sum(1)
    data = _pack_data(input, lens)
    return PackedSequence(data, as_tensor(batch_sizes.astype(np.int64)), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of ``pack_padded_sequence``: (padded batch, lengths), in the original order.

    >>> import graphgrad as torch
    >>> from graphgrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> pad_packed_sequence(pack_sequence([torch.tensor([1, 2]), torch.tensor([3])]))
    (tensor([[1, 3],
            [2, 0]]), tensor([2, 1]))
    """
    max_len = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    lens = _lengths_from_batch_sizes(sequence.batch_sizes._data)
    padded = _pad_data(sequence.data, lens, max_len, padding_value)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = as_tensor(lens)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = as_tensor(lens[unsorted._data])
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences (L_i, *) into (max L, B, *) (``batch_first``: (B, max L, *)), padded with
    ``padding_value`` on ``padding_side``; the result has the first sequence's dtype.

    >>> import graphgrad as torch
    >>> from graphgrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([torch.tensor([1, 2]), torch.tensor([3])], batch_first=True)
    tensor([[1, 2],
            [3, 0]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    dtype = first.dtype
    max_len = max(s.shape[0] for s in sequences)
    cols = []
    for s in sequences:
        n = s.shape[0]
        s = s.to(dtype).expand((n,) + trailing)
        if n < max_len:
            pad = full((max_len - n,) + trailing, padding_value, dtype=dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s], 0)
        cols.append(s)
    return stack(cols, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences a padded batch holds (the inverse of ``pad_sequence``).

    NOTE: torch transposes a time-major input in place (``transpose_``); this returns the same
    sequences without changing the caller's tensor.
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = lengths._data if isinstance(lengths, Tensor) else np.asarray(lengths)
    if len(lens) != padded_sequences.shape[0]:
        which = "shorter" if len(lens) < padded_sequences.shape[0] else "longer"
        raise ValueError(f"zip() argument 2 is {which} than argument 1")
    return [seq[: int(n)] for seq, n in zip(padded_sequences, lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *): ``pack_padded_sequence(pad_sequence(sequences))``."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences, in the original order, that a ``PackedSequence`` holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
