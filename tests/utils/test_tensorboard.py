"""``graphgrad.utils.tensorboard.SummaryWriter`` against torch 2.13's: both write the same
calls, and TensorBoard's own reader (EventAccumulator) reads back scalars, histograms, images,
text, tensors, hparams and the graph from graphgrad's files as from torch's."""

import io
import os

import numpy as np
import pytest
import torch

import graphgrad as gg

pytest.importorskip("tensorboard", reason="needs the tensorboard package (extra 'tensorboard')")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from graphgrad.utils.tensorboard import SummaryWriter  # noqa: E402

_SIZES = {"images": 0, "histograms": 0, "scalars": 0, "tensors": 0, "audio": 0}


def _read(path):
    acc = EventAccumulator(str(path), size_guidance=_SIZES)
    acc.Reload()
    return acc


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
    ax.plot([0, 1, 2], [1, 0, 2])
    return fig


def _write(writer_cls, m, path):
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((64, 8)).astype(np.float32)
    with writer_cls(str(path)) as w:
        for step in range(5):
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
            w.add_scalar("tensor_scalar", m.tensor(0.25 * step), step)
        w.add_scalars("run", {"a": 1.5, "b": -2.0}, 3)
        w.add_histogram("weights", m.tensor(w_np), 1)
        w.add_histogram("counts", m.tensor(w_np), 2, bins=10)
        w.add_histogram("ints", m.tensor(rng.integers(-5, 5, 100)), 3, bins="auto")
        w.add_text("notes", "epoch **1** done", 4)
        img = rng.uniform(0, 1, (3, 6, 5)).astype(np.float32)
        w.add_image("img/chw", m.tensor(img), 0)
        w.add_image("img/hwc", m.tensor(img.transpose(1, 2, 0)), 0, dataformats="HWC")
        w.add_image("img/gray", m.tensor(img[0]), 0, dataformats="HW")
        w.add_image("img/uint8", m.tensor((img * 255).astype(np.uint8)), 0)
        w.add_images("img/batch", m.tensor(rng.uniform(0, 1, (10, 1, 4, 3)).astype(np.float32)),
                     0)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "nesterov": True}, {"hp/acc": 0.75},
                      run_name="hp")
        labels = rng.integers(0, 2, 50)
        preds = rng.uniform(0, 1, 50)
        w.add_pr_curve("pr", m.tensor(labels), m.tensor(preds), 2)
        w.add_pr_curve("pr/weighted", m.tensor(labels), m.tensor(preds), 2, num_thresholds=9,
                       weights=rng.uniform(0.5, 1.5, 50))  # torch takes an array here
        feats = m.tensor(rng.standard_normal((5, 3)).astype(np.float32))
        w.add_embedding(feats, metadata=list("abcde"),
                        label_img=m.tensor(rng.uniform(0, 1, (5, 1, 3, 2)).astype(np.float32)))
        w.add_embedding(feats, metadata=[[i, c] for i, c in enumerate("vwxyz")],
                        metadata_header=["n", "c"], tag="with header", global_step=7)
        w.add_audio("sound", m.tensor(np.sin(np.arange(400) / 5.0).astype(np.float32)), 1,
                    sample_rate=8000)
        w.add_custom_scalars({"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
                              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]]}})
        w.add_figure("fig", _figure(), 3)
        w.add_figure("figs", [_figure(), _figure()], 3)
    return w_np


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tb")
    _write(SummaryWriter, gg, root / "gg")
    _write(TorchWriter, torch, root / "torch")
    return root


def test_files_and_tags(logs):
    for sub in ("run_a", "run_b", "hp"):
        assert os.path.isdir(logs / "gg" / sub) and os.path.isdir(logs / "torch" / sub)
    a, b = _read(logs / "gg").Tags(), _read(logs / "torch").Tags()
    for kind in ("scalars", "histograms", "images", "tensors"):
        assert sorted(a[kind]) == sorted(b[kind]), kind


def test_scalars(logs):
    a, b = _read(logs / "gg"), _read(logs / "torch")
    for tag in ("train/loss", "tensor_scalar"):
        assert [(e.step, e.value) for e in a.Scalars(tag)] == \
            [(e.step, e.value) for e in b.Scalars(tag)]
    for run in ("run_a", "run_b"):
        ra, rb = _read(logs / "gg" / run), _read(logs / "torch" / run)
        assert [(e.step, e.value) for e in ra.Scalars("run")] == \
            [(e.step, e.value) for e in rb.Scalars("run")]


@pytest.mark.parametrize("tag", ["weights", "counts", "ints"])
def test_histograms(logs, tag):
    a = _read(logs / "gg").Histograms(tag)[0]
    b = _read(logs / "torch").Histograms(tag)[0]
    ha, hb = a.histogram_value, b.histogram_value
    assert a.step == b.step
    for field in ("min", "max", "num"):
        assert getattr(ha, field) == getattr(hb, field), field
    assert ha.sum == pytest.approx(hb.sum, rel=1e-5, abs=1e-5)
    assert ha.sum_squares == pytest.approx(hb.sum_squares, rel=1e-5)
    assert sum(ha.bucket) == ha.num
    if tag != "weights":  # NumPy's bins: the same buckets as torch's
        assert list(ha.bucket) == list(hb.bucket)
        np.testing.assert_allclose(ha.bucket_limit, hb.bucket_limit, rtol=1e-6)


@pytest.mark.parametrize("tag", ["img/chw", "img/hwc", "img/gray", "img/uint8", "img/batch",
                                 "fig", "figs"])
def test_images_decode_to_torchs_pixels(logs, tag):
    Image = pytest.importorskip("PIL.Image", reason="decoding PNGs needs Pillow (matplotlib's)")
    a = _read(logs / "gg").Images(tag)[0]
    b = _read(logs / "torch").Images(tag)[0]
    assert (a.width, a.height) == (b.width, b.height)
    pa = np.asarray(Image.open(io.BytesIO(a.encoded_image_string)).convert("RGBA"))
    pb = np.asarray(Image.open(io.BytesIO(b.encoded_image_string)).convert("RGBA"))
    assert pa.shape == pb.shape and np.abs(pa.astype(int) - pb.astype(int)).max() <= 1


@pytest.mark.parametrize("tag", ["pr", "pr/weighted"])
def test_pr_curves(logs, tag):
    from tensorboard.util import tensor_util

    a = _read(logs / "gg").Tensors(tag)[0]
    b = _read(logs / "torch").Tensors(tag)[0]
    assert a.step == b.step
    np.testing.assert_allclose(tensor_util.make_ndarray(a.tensor_proto),
                               tensor_util.make_ndarray(b.tensor_proto), rtol=1e-6, atol=1e-6)


def test_embeddings_for_the_projector(logs):
    Image = pytest.importorskip("PIL.Image", reason="decoding PNGs needs Pillow (matplotlib's)")
    from google.protobuf import text_format
    from tensorboard.plugins.projector import projector_config_pb2

    configs = []
    for run in ("gg", "torch"):
        text = (logs / run / "projector_config.pbtxt").read_text()
        configs.append(text_format.Parse(text, projector_config_pb2.ProjectorConfig()))
    assert configs[0] == configs[1]
    for emb in configs[0].embeddings:
        for field in ("tensor_path", "metadata_path"):
            a = (logs / "gg" / getattr(emb, field)).read_text()
            b = (logs / "torch" / getattr(emb, field)).read_text()
            if field == "tensor_path":
                np.testing.assert_allclose(np.loadtxt(io.StringIO(a)),
                                           np.loadtxt(io.StringIO(b)), rtol=1e-7)
            else:
                assert a == b
        if emb.sprite.image_path:
            pa, pb = (np.asarray(Image.open(logs / run / emb.sprite.image_path).convert("RGB"))
                      for run in ("gg", "torch"))
            assert pa.shape == pb.shape and np.abs(pa.astype(int) - pb.astype(int)).max() <= 1


def test_custom_scalars_layout(logs):
    from tensorboard.plugins.custom_scalar import layout_pb2

    def layout(run):
        t = _read(logs / run).Tensors("custom_scalars__config__")[0].tensor_proto
        return layout_pb2.Layout.FromString(t.string_val[0])
    assert layout("gg") == layout("torch")


def test_audio(logs):
    a = _read(logs / "gg").Audio("sound")[0]
    b = _read(logs / "torch").Audio("sound")[0]
    assert (a.step, a.sample_rate, a.length_frames, a.content_type) == \
        (b.step, b.sample_rate, b.length_frames, b.content_type)
    assert a.encoded_audio_string == b.encoded_audio_string


def test_text_and_hparams(logs):
    a = _read(logs / "gg").Tensors("notes/text_summary")[0]
    b = _read(logs / "torch").Tensors("notes/text_summary")[0]
    assert a.step == b.step and a.tensor_proto.string_val == b.tensor_proto.string_val
    ha, hb = _read(logs / "gg" / "hp"), _read(logs / "torch" / "hp")
    assert [e.value for e in ha.Scalars("hp/acc")] == [e.value for e in hb.Scalars("hp/acc")]
    from tensorboard.plugins.hparams import plugin_data_pb2

    def start(acc):
        content = acc.summary_metadata["_hparams_/session_start_info"].plugin_data.content
        info = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
        return {k: (v.WhichOneof("kind"), getattr(v, v.WhichOneof("kind")))
                for k, v in info.hparams.items()}

    assert start(ha) == start(hb)


def test_graph_of_the_model(tmp_path):
    model = gg.nn.Sequential(gg.nn.Linear(3, 4), gg.nn.ReLU(), gg.nn.Linear(4, 2))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, gg.randn(5, 3))
    graph = _read(tmp_path).Graph()
    names = {n.name: n for n in graph.node}
    params = {n for n, _ in model.named_parameters()}
    assert params <= set(names)  # every parameter is an input node, by its module path
    ops = [n.op for n in graph.node]
    assert ops.count("AddmmBackward0") == 2 and "ReluBackward0" in ops
    out = names["output/0"]
    assert names[out.input[0]].op == "AddmmBackward0"
    for node in graph.node:  # every edge points at a node of the graph
        assert all(i in names for i in node.input)
    assert list(names["0.weight"].attr["_output_shapes"].list.shape[0].dim[0:1])[0].size == 4


def test_errors_and_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    with pytest.raises(ValueError):
        w.add_scalar("x", gg.ones(2))
    with pytest.raises(NotImplementedError, match="add_video"):
        w.add_video("v", gg.ones(1, 2, 3, 4, 4))
    w.close()
    w.close()  # closing twice is harmless, as torch's
