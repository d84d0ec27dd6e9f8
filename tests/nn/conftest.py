"""pytest settings for tests/nn.

The ModuleInfo family files (moduleinfo_<family>.py) are data that tests/nn/moduleinfo.py loads
after itself; --doctest-modules must not import them on their own.
"""

collect_ignore_glob = ["moduleinfo_*.py"]
