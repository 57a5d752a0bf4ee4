"""Helpers of the test suite that need pytest (the installed package never imports pytest)."""

import os

import pytest

__all__ = ["on_ci", "require_go"]


def on_ci() -> bool:
    """True under CI=true, where a missing tool is a failure, not a skip."""
    return os.environ.get("CI", "").lower() == "true"


def require_go(reason: str | None = None) -> None:
    """Skip (or, with CI=true, fail) when Go is missing; ``reason`` defaults to go_available()."""
    if reason is None:
        from hhe_gen.host.lattigo import go_available
        reason = go_available()
    if reason is None:
        return
    if on_ci():
        pytest.fail(f"CI=true but the Lattigo peer cannot be built: {reason}")
    pytest.skip(f"Lattigo peer not available: {reason}")
