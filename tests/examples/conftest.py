"""pytest settings for tests/examples.

fixtures/ holds data and the script that made it (it needs librosa, which the test extra does
not install on purpose); --doctest-modules must not import it.
"""

collect_ignore_glob = ["fixtures/*"]
