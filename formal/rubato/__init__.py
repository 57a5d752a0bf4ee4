"""Formal harnesses of the Rubato core (``hhe-gen prove rubato``); see :mod:`.proofs`."""
