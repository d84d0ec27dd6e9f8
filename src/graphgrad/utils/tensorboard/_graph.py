"""``add_graph``'s GraphDef: the autograd graph of one forward call of the model.

graphgrad has no TorchScript trace, so the graph TensorBoard shows is the one autograd recorded:
a node per backward Node (``AddmmBackward0``, ...), named by the op, with the parameters it
reads as input nodes named by their module paths (``0.weight``), and the model's inputs and
outputs. Ops on tensors that need no gradient leave no Node and do not appear.
"""

from __future__ import annotations

from ._proto import tb


def _flatten(x):
    from ..._tensor import Tensor

    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _flatten(item)]
    if isinstance(x, dict):
        return [t for item in x.values() for t in _flatten(item)]
    return []


def graph_def(model, input_to_model=None, verbose=False):
    """The GraphDef of ``model(*input_to_model)``'s autograd graph."""
    from ... import enable_grad

    p = tb()
    args = () if input_to_model is None else input_to_model
    args = args if isinstance(args, (tuple, list)) else (args,)
    with enable_grad():
        outputs = _flatten(model(*args))
    params = {id(t): name for name, t in model.named_parameters()} \
        if hasattr(model, "named_parameters") else {}
    inputs = {id(t): f"input/{i}" for i, t in enumerate(_flatten(list(args)))}

    names, nodes, order = {}, {}, []
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:  # iterative: a deep graph must not recurse
        fn = stack.pop()
        if id(fn) in names:
            continue
        var = getattr(fn, "variable", None)
        if var is not None:
            name = params.get(id(var)) or inputs.get(id(var)) or f"leaf/{len(names)}"
            op = "Parameter" if id(var) in params else "Input"
            shape = list(var.shape)
        else:
            name, op, shape = f"{fn.name()}/{len(names)}", fn.name(), None
        names[id(fn)] = name
        nodes[id(fn)] = (fn, op, shape)
        order.append(id(fn))
        stack.extend(nxt for nxt, _ in getattr(fn, "next_functions", ()) if nxt is not None)

    graph = p.graph_pb2.GraphDef(versions=p.versions_pb2.VersionDef(producer=22))
    for key in reversed(order):  # producers before consumers
        fn, op, shape = nodes[key]
        node = graph.node.add(name=names[key], op=op)
        for nxt, _ in getattr(fn, "next_functions", ()):
            if nxt is not None:
                node.input.append(names[id(nxt)])
        if shape is not None:
            node.attr["_output_shapes"].list.shape.add(
                dim=[p.tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in shape])
    for i, t in enumerate(outputs):
        node = graph.node.add(name=f"output/{i}", op="Output")
        if t.grad_fn is not None:
            node.input.append(names[id(t.grad_fn)])
        node.attr["_output_shapes"].list.shape.add(
            dim=[p.tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in t.shape])
    if verbose:
        print(graph)
    return graph
