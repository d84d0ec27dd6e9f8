"""What graphgrad can tell about a running program: the memory ledger, live graphs, the
graph-retention detector. The public faces are ``graphgrad.memory`` and ``graphgrad.viz``."""
