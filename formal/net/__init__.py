"""Formal harnesses of the network cores (``hhe-gen prove net``)."""
