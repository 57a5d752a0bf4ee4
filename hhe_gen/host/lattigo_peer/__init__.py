"""Go source of the Lattigo v6 test peer, shipped as package data (``hhe_gen.host.lattigo_peer``).

``hhe_gen.host.lattigo`` builds it with ``go build`` into a cache directory and talks JSON to it.
"""
