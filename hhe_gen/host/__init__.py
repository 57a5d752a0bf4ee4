"""The host side: the Lattigo peer, the Rubato known-answer checker (later the client and the network receiver)."""
