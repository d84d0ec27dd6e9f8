"""A minimal PNG encoder (zlib from the standard library): TensorBoard's images are PNG, and
graphgrad needs no imaging package for them."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(hwc: np.ndarray) -> bytes:
    """PNG bytes of an (H, W, C) uint8 array, C = 1 (gray), 3 (RGB) or 4 (RGBA)."""
    h, w, c = hwc.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    rows = np.concatenate([np.zeros((h, 1), np.uint8), hwc.reshape(h, w * c)], axis=1)
    header = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b""))
