"""``torch.utils.tensorboard.summary``: Summary protos for scalars, histograms, images, text and
hparams, built from graphgrad tensors, NumPy arrays or numbers."""

from __future__ import annotations

import numpy as np

from ._png import encode_png
from ._proto import tb

__all__ = ["scalar", "histogram", "histogram_raw", "make_histogram", "image", "make_image",
           "text", "tensor_proto", "hparams", "pr_curve", "pr_curve_raw", "compute_curve",
           "figure_to_image", "audio", "custom_scalars"]


def _np(x):
    """A NumPy array of a tensor, an array, a number or a list (a Tensor is detached)."""
    from ..._tensor import Tensor

    if isinstance(x, Tensor):
        return x.detach().numpy()
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor passed by the user
        return x.detach().cpu().numpy()
    return np.asarray(x)


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A Summary with one scalar (``simple_value``, or a tensor value when ``new_style``)."""
    p = tb()
    value = _np(tensor).squeeze()
    if value.ndim != 0:
        raise ValueError(f"Tensor should contain one element (0 dimensions). Was given size: "
                         f"{value.size} and {value.ndim} dimensions.")
    value = float(value)
    if new_style:
        dtype = p.types_pb2.DT_DOUBLE if double_precision else p.types_pb2.DT_FLOAT
        t = p.tensor_pb2.TensorProto(dtype=dtype,
                                     tensor_shape=p.tensor_shape_pb2.TensorShapeProto())
        (t.double_val if double_precision else t.float_val).append(value)
        meta = p.summary_pb2.SummaryMetadata(
            plugin_data=p.summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
        return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(
            tag=name, tensor=t, metadata=meta)])
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(tag=name,
                                                                      simple_value=value)])


def _tensorflow_limits():
    """TensorFlow's default bucket edges: +-1e-12 growing by 10% to 1e20, and 0."""
    pos = [1e-12]
    while pos[-1] < 1e20:
        pos.append(pos[-1] * 1.1)
    return np.array([-v for v in reversed(pos)] + [0.0] + pos + [np.finfo(np.float64).max])


def make_histogram(values, bins, max_bins=None):
    """The HistogramProto of ``values``: ``bins`` is ``"tensorflow"`` (TensorFlow's default
    exponential buckets, empty ends trimmed), a NumPy bins string (``"auto"``, ``"fd"``), a
    count or an edge array."""
    p = tb()
    v = _np(values).astype(np.float64).reshape(-1)
    if v.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        limits = _tensorflow_limits()
        counts = np.bincount(np.searchsorted(limits, v, side="left"),
                             minlength=limits.size)[:limits.size]
        nz = np.nonzero(counts)[0]
        lo, hi = max(nz[0] - 1, 0), nz[-1] + 1  # keep one empty bucket before the first
        limits, counts = limits[lo:hi], counts[lo:hi]
    else:
        counts, edges = np.histogram(v, bins=bins)
        # as torch's: every edge is a limit, the first bucket (below the first edge) empty
        counts, limits = np.concatenate([[0], counts]), edges
        if max_bins is not None and counts.size > max_bins:  # merge neighbours, as torch
            k = -(-counts.size // max_bins)
            pad = (-counts.size) % k
            counts = np.pad(counts, (0, pad)).reshape(-1, k).sum(1)
            limits = np.pad(limits, (0, pad), mode="edge").reshape(-1, k)[:, -1]
    return p.summary_pb2.HistogramProto(
        min=float(v.min()), max=float(v.max()), num=int(v.size), sum=float(v.sum()),
        sum_squares=float(np.dot(v, v)), bucket_limit=[float(x) for x in limits],
        bucket=[float(c) for c in counts])


def histogram(name, values, bins, max_bins=None):
    p = tb()
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(
        tag=name, histo=make_histogram(values, bins, max_bins))])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002
    p = tb()
    h = p.summary_pb2.HistogramProto(min=min, max=max, num=num, sum=sum,
                                     sum_squares=sum_squares,
                                     bucket_limit=list(bucket_limits),
                                     bucket=list(bucket_counts))
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(tag=name, histo=h)])


def _to_hwc(img, dataformats):
    """``img`` as (H, W, C) for a layout string of C/H/W (and N: tiled 8 to a row, as torch's
    grid); one channel becomes gray RGB, as torch writes it."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or set(fmt) - set("NCHW") or img.ndim != len(fmt):
        raise ValueError(f"size of input tensor and input format are different. tensor shape: "
                         f"{img.shape}, input_format: {dataformats}")
    if "N" in fmt:
        img = img.transpose([fmt.index(c) for c in "NCHW" if c in fmt])
        if "C" not in fmt:
            img = img[:, None]
        if img.shape[1] == 1:
            img = np.concatenate([img] * 3, axis=1)
        n, c, h, w = img.shape
        cols = min(n, 8)
        rows = -(-n // cols)
        grid = np.zeros((c, rows * h, cols * w), img.dtype)
        for i in range(n):
            r, q = divmod(i, cols)
            grid[:, r * h:(r + 1) * h, q * w:(q + 1) * w] = img[i]
        img, fmt = grid, "CHW"
    if fmt == "HW":
        img, fmt = img[None], "CHW"
    img = img.transpose([fmt.index(c) for c in "HWC"])
    if img.shape[2] == 1:
        img = np.concatenate([img] * 3, axis=2)
    if img.shape[2] not in (3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels, not {img.shape[2]}")
    return img


def make_image(img_hwc):
    p = tb()
    h, w, c = img_hwc.shape
    return p.summary_pb2.Summary.Image(height=h, width=w, colorspace=c,
                                       encoded_image_string=encode_png(img_hwc))


def image(tag, tensor, rescale=1, dataformats="CHW"):
    """An image summary: float pixels in [0, 1] are scaled to 0..255 (truncated, as torch's),
    uint8 kept."""
    p = tb()
    arr = _np(tensor)
    hwc = _to_hwc(arr, dataformats)
    if hwc.dtype != np.uint8:
        hwc = np.clip(hwc * (255.0 * rescale), 0, 255).astype(np.uint8)
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(
        tag=tag, image=make_image(np.ascontiguousarray(hwc)))])


def tensor_proto(tag, tensor):
    """A Summary holding ``tensor`` itself (TensorBoard's tensor value), float or int."""
    p = tb()
    arr = np.ascontiguousarray(_np(tensor))
    kinds = {"f": (p.types_pb2.DT_FLOAT, np.float32), "i": (p.types_pb2.DT_INT64, np.int64),
             "u": (p.types_pb2.DT_INT64, np.int64), "b": (p.types_pb2.DT_BOOL, np.bool_)}
    if arr.dtype.kind not in kinds:
        raise TypeError(f"add_tensor: unsupported dtype {arr.dtype}")
    dtype, np_dtype = kinds[arr.dtype.kind]
    if arr.dtype == np.float64:
        dtype, np_dtype = p.types_pb2.DT_DOUBLE, np.float64
    shape = p.tensor_shape_pb2.TensorShapeProto(
        dim=[p.tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in arr.shape])
    t = p.tensor_pb2.TensorProto(dtype=dtype, tensor_shape=shape,
                                 tensor_content=arr.astype(np_dtype).tobytes())
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(tag=tag, tensor=t)])


def text(tag, text):
    """A text-plugin summary: the string as a scalar string tensor, under ``tag/text_summary``."""
    p = tb()
    meta = p.summary_pb2.SummaryMetadata(
        plugin_data=p.summary_pb2.SummaryMetadata.PluginData(plugin_name="text",
                                                             content=b"{}"))
    shape = p.tensor_shape_pb2.TensorShapeProto(
        dim=[p.tensor_shape_pb2.TensorShapeProto.Dim(size=1)])
    t = p.tensor_pb2.TensorProto(dtype=p.types_pb2.DT_STRING, string_val=[text.encode()],
                                 tensor_shape=shape)
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(
        tag=tag + "/text_summary", metadata=meta, tensor=t)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three hparams-plugin summaries (experiment, session start, session end) for one run:
    numbers, strings, bools and tensors with one element as hyperparameters."""
    from ..._tensor import Tensor

    try:
        from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
    except ImportError as err:
        raise ImportError("add_hparams needs the tensorboard package: install graphgrad's "
                          "'tensorboard' extra") from err
    from google.protobuf import struct_pb2

    p = tb()
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("parameter: hparam_dict and metric_dict should be dictionary.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = v.item()
        info = api_pb2.HParamInfo(name=k)
        if isinstance(v, (int, float)):  # a bool too: torch records True as 1.0
            start.hparams[k].number_value = float(v)
            info.type = api_pb2.DATA_TYPE_FLOAT64
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            info.type = api_pb2.DATA_TYPE_STRING
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        if k in hparam_domain_discrete:
            vals = struct_pb2.ListValue()
            for d in hparam_domain_discrete[k]:
                if isinstance(d, (int, float)):
                    vals.values.add(number_value=float(d))
                else:
                    vals.values.add(string_value=str(d))
            info.domain_discrete.CopyFrom(vals)
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)

    def wrap(tag, **data):
        content = plugin_data_pb2.HParamsPluginData(version=0, **data).SerializeToString()
        meta = p.summary_pb2.SummaryMetadata(plugin_data=p.summary_pb2.SummaryMetadata.PluginData(
            plugin_name="hparams", content=content))
        return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(tag=tag,
                                                                          metadata=meta)])

    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS)
    return (wrap("_hparams_/experiment", experiment=experiment),
            wrap("_hparams_/session_start_info", session_start_info=start),
            wrap("_hparams_/session_end_info", session_end_info=end))


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """The (6, num_thresholds) PR-curve table TensorBoard reads: true/false positives, true/false
    negatives, precision and recall at thresholds 0, 1/(n-1), ..., 1."""
    n = 127 if num_thresholds is None else int(num_thresholds)
    labels = _np(labels).astype(np.float64).reshape(-1)
    predictions = _np(predictions).astype(np.float64).reshape(-1)
    w = 1.0 if weights is None else _np(weights).astype(np.float64).reshape(-1)
    bucket = np.floor(predictions * (n - 1)).astype(np.int64)
    w = w * np.ones_like(labels)
    keep = (bucket >= 0) & (bucket <= n - 1)  # predictions outside [0, 1] count nowhere
    bucket, labels, w = bucket[keep], labels[keep], w[keep]
    tp_b = np.bincount(bucket, weights=labels * w, minlength=n)
    fp_b = np.bincount(bucket, weights=(1.0 - labels) * w, minlength=n)
    tp = np.cumsum(tp_b[::-1])[::-1]  # predictions at or above each threshold
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    eps = 1e-7
    precision = tp / np.maximum(eps, tp + fp)
    recall = tp / np.maximum(eps, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _pr_summary(tag, data, num_thresholds):
    p = tb()
    from tensorboard.plugins.pr_curve import plugin_data_pb2

    content = plugin_data_pb2.PrCurvePluginData(version=0, num_thresholds=num_thresholds)
    meta = p.summary_pb2.SummaryMetadata(plugin_data=p.summary_pb2.SummaryMetadata.PluginData(
        plugin_name="pr_curves", content=content.SerializeToString()))
    arr = np.asarray(data, dtype=np.float32)
    shape = p.tensor_shape_pb2.TensorShapeProto(
        dim=[p.tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in arr.shape])
    t = p.tensor_pb2.TensorProto(dtype=p.types_pb2.DT_FLOAT, tensor_shape=shape,
                                 float_val=arr.reshape(-1).tolist())
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(tag=tag, metadata=meta,
                                                                      tensor=t)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    num_thresholds = min(int(num_thresholds), 127)  # as torch: at most 127 thresholds
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights),
                       num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    num_thresholds = min(int(num_thresholds), 127)
    data = np.stack([_np(x).astype(np.float64) for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, num_thresholds)


def figure_to_image(figures, close=True):
    """A matplotlib figure (or a list of them) as CHW (NCHW) uint8 RGB arrays."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError as err:
        raise ImportError("add_figure needs matplotlib (graphgrad's 'examples' extra)") from err

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba(), dtype=np.uint8)
        if close:
            plt.close(figure)
        return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def audio(tag, tensor, sample_rate=44100):
    """A mono clip (samples in [-1, 1]; louder ones are clipped, with a warning) as 16-bit
    WAV."""
    import io
    import warnings
    import wave

    p = tb()
    samples = _np(tensor).astype(np.float64).squeeze()
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    if samples.size and np.abs(samples).max() > 1:
        warnings.warn("audio amplitude out of range, auto clipped.", UserWarning, stacklevel=3)
        samples = np.clip(samples, -1, 1)
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    clip = p.summary_pb2.Summary.Audio(sample_rate=sample_rate, num_channels=1,
                                       length_frames=pcm.shape[-1],
                                       encoded_audio_string=buf.getvalue(),
                                       content_type="audio/wav")
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(tag=tag, audio=clip)])


def custom_scalars(layout):
    """The custom-scalars plugin's layout: ``{category: {chart title: ["Multiline", [tags]]
    or ["Margin", [value, lower, upper]]}}``."""
    from tensorboard.plugins.custom_scalar import layout_pb2

    p = tb()
    categories = []
    for title, charts in layout.items():
        chart_list = []
        for chart_title, (kind, tags) in charts.items():
            if kind == "Multiline":
                chart = layout_pb2.Chart(title=chart_title,
                                         multiline=layout_pb2.MultilineChartContent(tag=tags))
            elif kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("a Margin chart needs [value, lower, upper] tags")
                series = [layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                               upper=tags[2])]
                chart = layout_pb2.Chart(title=chart_title,
                                         margin=layout_pb2.MarginChartContent(series=series))
            else:
                raise NotImplementedError(f"custom scalar chart kind {kind!r} (Multiline or "
                                          "Margin)")
            chart_list.append(chart)
        categories.append(layout_pb2.Category(title=title, chart=chart_list))
    content = layout_pb2.Layout(category=categories).SerializeToString()
    meta = p.summary_pb2.SummaryMetadata(plugin_data=p.summary_pb2.SummaryMetadata.PluginData(
        plugin_name="custom_scalars"))
    t = p.tensor_pb2.TensorProto(dtype=p.types_pb2.DT_STRING, string_val=[content],
                                 tensor_shape=p.tensor_shape_pb2.TensorShapeProto())
    return p.summary_pb2.Summary(value=[p.summary_pb2.Summary.Value(
        tag="custom_scalars__config__", tensor=t, metadata=meta)])
