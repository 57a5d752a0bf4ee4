"""Shared fixtures of the Lattigo interop tests: skip without Go, except under CI=true (fail)."""

import pytest

from hhe_gen.lattigo import LattigoPeer
from hhe_gen.testing import require_go


@pytest.fixture(scope="session")
def lattigo_peer() -> LattigoPeer:
    require_go()
    return LattigoPeer()
