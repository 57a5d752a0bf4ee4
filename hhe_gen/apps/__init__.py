"""The applications: the ``hhe-gen`` command line, generate, demo, bench, prove."""
