"""Shared fixtures of the Lattigo interop tests: skip without Go, except under CI=true (fail)."""

import os

import pytest

from hhe_gen.lattigo import LattigoPeer, go_available


def require_go(reason: str | None = None) -> None:
    """Skip (or, with CI=true, fail) when Go is missing; ``reason`` defaults to go_available()."""
    reason = go_available() if reason is None else reason
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but the Lattigo peer cannot be built: {reason}")
    pytest.skip(f"Lattigo peer not available: {reason}")


@pytest.fixture(scope="session")
def lattigo_peer() -> LattigoPeer:
    require_go()
    return LattigoPeer()
