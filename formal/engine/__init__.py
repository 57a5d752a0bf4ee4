"""Formal proofs of the engine's task manager (``hhe-gen prove engine``): :mod:`.scheduler` (the
harness: a TaskManager with free instruction words, free abort and free mock units of bounded
latency), :mod:`.mutants` (broken managers each property must refute); registered in
:mod:`.proofs`."""
