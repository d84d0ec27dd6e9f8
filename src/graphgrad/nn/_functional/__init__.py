"""Composite ``torch.nn.functional`` functions, one family per file; ``nn/functional.py``
re-exports them next to the op table's primitives."""
