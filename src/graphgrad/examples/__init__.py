"""Runnable examples: ``python -m graphgrad.examples.<name>``.

Each one is an ordinary PyTorch program that imports graphgrad as ``torch``; most take
``--framework torch`` to run the same code on PyTorch for comparison. ``digits`` trains an MLP
and a small CNN on scikit-learn's 8x8 handwritten digits (``pip install graphgrad[examples]``).
"""
