"""``torch.utils.tensorboard.writer``: ``SummaryWriter`` and ``FileWriter``, writing TensorBoard
event files through the ``tensorboard`` package (graphgrad's optional extra ``tensorboard``)."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from . import summary as _summary
from ._graph import graph_def
from ._proto import tb

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protos to one event file in ``log_dir`` (asynchronously, flushed every
    ``flush_secs`` and on ``flush``/``close``)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        log_dir = str(log_dir)
        self.event_writer = tb().EventFileWriter(log_dir, max_queue, flush_secs,
                                                 filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(tb().event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        self.add_event(tb().event_pb2.Event(graph_def=graph_profile.SerializeToString()), None,
                       walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


class SummaryWriter:
    """``torch.utils.tensorboard.SummaryWriter``: scalars, histograms, images, text, hparams,
    tensors and the model's graph, into event files TensorBoard reads.

    ``log_dir`` defaults to ``runs/<date>_<host><comment>`` as torch's. Video and meshes raise
    NotImplementedError (docs/compat.md).
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        tb()  # fail now, naming the extra, if tensorboard is missing
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = None
        self.all_writers = None
        self._get_file_writer()
        self.default_bins = "tensorflow"

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                p = tb()
                start = p.event_pb2.Event(step=self.purge_step,
                                          session_log=p.event_pb2.SessionLog(
                                              status=p.event_pb2.SessionLog.START))
                self.file_writer.add_event(start)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def _add(self, summ, global_step, walltime):
        self._get_file_writer().add_summary(summ, global_step, walltime)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(_summary.scalar(tag, scalar_value, new_style=new_style,
                                  double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each scalar goes to its own run, ``log_dir/<main_tag>_<tag>``, under ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(base, main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[path] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._add(_summary.tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        self._add(_summary.histogram(tag, values, bins, max_bins=max_bins), global_step,
                  walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,  # noqa: A002
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(_summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                         bucket_counts), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                  walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                  walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(_summary.text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The autograd graph of ``model(*input_to_model)`` (see ``_graph``)."""
        self._get_file_writer().add_graph(graph_def(model, input_to_model, verbose))

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """One hparams session in the run ``log_dir/<run_name>`` (a timestamp by default), with
        each metric logged there as a scalar."""
        exp, start, end = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = run_name or str(time.time())
        path = run if os.path.isabs(run) else os.path.join(self._get_file_writer().get_logdir(),
                                                            run)
        with SummaryWriter(log_dir=path) as w:
            for s in (exp, start, end):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def _absent(self, what):
        raise NotImplementedError(f"SummaryWriter.{what} is not implemented in graphgrad "
                                  "(scalars, histograms, images, figures, audio, text, PR "
                                  "curves, embeddings, custom scalars, hparams, tensors and "
                                  "graphs are)")

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list, as one image grid), rendered with Agg."""
        image = _summary.figure_to_image(figure, close)
        if isinstance(figure, list):
            self.add_images(tag, image, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, image, global_step, walltime, dataformats="CHW")

    def add_video(self, *args, **kwargs):
        self._absent("add_video")

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._add(_summary.audio(tag, snd_tensor, sample_rate), global_step, walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Points for TensorBoard's projector: ``log_dir/<step>/<tag>/tensors.tsv``, optional
        ``metadata.tsv`` and ``sprite.png``, and an entry in ``projector_config.pbtxt``."""
        from ._embedding import write_embedding

        write_embedding(self._get_file_writer().get_logdir(), mat, metadata, label_img,
                        global_step, tag, metadata_header)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        self._add(_summary.pr_curve(tag, labels, predictions, num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        self._add(_summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                        true_negative_counts, false_negative_counts, precision,
                                        recall, num_thresholds, weights), global_step, walltime)

    def add_custom_scalars(self, layout):
        """TensorBoard's custom-scalars layout (see ``summary.custom_scalars``)."""
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_mesh(self, *args, **kwargs):
        self._absent("add_mesh")

    def add_onnx_graph(self, *args, **kwargs):
        self._absent("add_onnx_graph")

    def flush(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
