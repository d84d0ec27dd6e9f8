"""The ``tensorboard`` package's protocol buffers, imported on first use (optional extra)."""

from __future__ import annotations


def tb():
    """The tensorboard modules graphgrad's writer needs, or ImportError naming the extra."""
    try:
        from tensorboard.compat.proto import (
            attr_value_pb2,
            event_pb2,
            graph_pb2,
            node_def_pb2,
            summary_pb2,
            tensor_pb2,
            tensor_shape_pb2,
            types_pb2,
            versions_pb2,
        )
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as err:
        raise ImportError("torch.utils.tensorboard needs the tensorboard package: install "
                          "graphgrad's 'tensorboard' extra (pip install "
                          "'graphgrad[tensorboard]')") from err

    class _TB:
        pass

    ns = _TB()
    for mod in (attr_value_pb2, event_pb2, graph_pb2, node_def_pb2, summary_pb2, tensor_pb2,
                tensor_shape_pb2, types_pb2, versions_pb2):
        setattr(ns, mod.__name__.rsplit(".", 1)[1], mod)
    ns.EventFileWriter = EventFileWriter
    return ns
