"""``python -m graphgrad``: runs the seed example, prints the graph it built and the gradients."""

from __future__ import annotations

import graphgrad as torch


def describe_graph(root) -> list[str]:
    """One line per node reachable from ``root.grad_fn``, walked iteratively, parents first."""
    lines, seen = [], set()
    stack = [(root.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        indent = "  " * depth
        if node is None:
            lines.append(f"{indent}(no gradient: constant input)")
            continue
        if id(node) in seen:
            lines.append(f"{indent}{node.name()} (shared, shown above)")
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            v = node.variable
            lines.append(f"{indent}{node.name()} -> leaf {v!r} shape={list(v.shape)}")
            continue
        lines.append(f"{indent}{node.name()}")
        for child, _ in reversed(node.next_functions):
            stack.append((child, depth + 1))
    return lines


def main() -> None:
    x = torch.tensor(2.0)
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    loss = (x * w + b - 10) ** 2
    print("loss = (x * w + b - 10) ** 2 with x = 2, w = 3, b = 1")
    print("loss:", loss)
    print("loss.grad_fn:", loss.grad_fn)
    print("graph, from the loss down to the leaves:")
    for line in describe_graph(loss):
        print("  " + line)
    loss.backward()
    print("after loss.backward():")
    print("w.grad, b.grad =", w.grad, b.grad)


if __name__ == "__main__":
    main()
