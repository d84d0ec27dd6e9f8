"""``SummaryWriter.add_embedding``'s files, in the layout TensorBoard's projector reads (and
torch writes): one folder per embedding with ``tensors.tsv`` (a row per point),
``metadata.tsv`` (a label per point, or a header and rows) and ``sprite.png`` (the points'
images in a grid), each listed in ``projector_config.pbtxt``."""

from __future__ import annotations

import math
import os

import numpy as np

from ._png import encode_png
from .summary import _np


def _sprite(images):
    """The (N, C, H, W) images as one RGB grid of ceil(sqrt(N)) columns (and as many rows as
    needed), as torch's sprite."""
    imgs = _np(images)
    if imgs.ndim != 4:
        raise ValueError("label_img should be a 4-D tensor (N, C, H, W)")
    if imgs.dtype != np.uint8:
        imgs = np.clip(imgs * 255.0, 0, 255).astype(np.uint8)
    if imgs.shape[1] == 1:
        imgs = np.concatenate([imgs] * 3, axis=1)
    n, c, h, w = imgs.shape
    cols = int(math.ceil(math.sqrt(n)))
    rows = -(-n // cols)
    grid = np.zeros((c, rows * h, cols * w), np.uint8)
    for i in range(n):
        r, q = divmod(i, cols)
        grid[:, r * h:(r + 1) * h, q * w:(q + 1) * w] = imgs[i]
    return encode_png(np.ascontiguousarray(grid.transpose(1, 2, 0)))


def write_embedding(logdir, mat, metadata, label_img, global_step, tag, metadata_header):
    from google.protobuf import text_format
    from tensorboard.plugins.projector import projector_config_pb2

    mat = _np(mat)
    if mat.ndim != 2:
        raise ValueError("mat should be a 2-D tensor (N, D)")
    step = 0 if global_step is None else int(global_step)
    sub = f"{step:05d}/{tag}"  # the tag as given, as torch writes it
    folder = os.path.join(logdir, sub)
    os.makedirs(folder, exist_ok=True)
    emb = projector_config_pb2.EmbeddingInfo(tensor_name=f"{tag}:{step:05d}",
                                             tensor_path=f"{sub}/tensors.tsv")
    if metadata is not None:
        if len(metadata) != mat.shape[0]:
            raise ValueError("#labels should equal with #data points")
        lines = [str(x) for x in metadata] if metadata_header is None else \
            ["\t".join(str(h) for h in metadata_header)] + \
            ["\t".join(str(v) for v in row) for row in metadata]
        with open(os.path.join(folder, "metadata.tsv"), "w", encoding="utf8") as f:
            f.write("".join(line + "\n" for line in lines))
        emb.metadata_path = f"{sub}/metadata.tsv"
    if label_img is not None:
        if _np(label_img).shape[0] != mat.shape[0]:
            raise ValueError("#images should equal with #data points")
        with open(os.path.join(folder, "sprite.png"), "wb") as f:
            f.write(_sprite(label_img))
        emb.sprite.image_path = f"{sub}/sprite.png"
        h, w = _np(label_img).shape[2:4]
        emb.sprite.single_image_dim.extend([w, h])  # the projector reads width, height
    with open(os.path.join(folder, "tensors.tsv"), "w", encoding="utf8") as f:
        for row in mat.astype(np.float64).tolist():
            f.write("\t".join(repr(float(x)) for x in row) + "\n")
    config = projector_config_pb2.ProjectorConfig(embeddings=[emb])
    with open(os.path.join(logdir, "projector_config.pbtxt"), "a", encoding="utf8") as f:
        f.write(text_format.MessageToString(config))
