"""Shared fixtures of the Lattigo interop tests: skip without Go, except under CI=true (fail)."""

import pytest

from hhe_gen.host.lattigo import LattigoPeer
from testsupport import require_go


@pytest.fixture(scope="session")
def lattigo_peer() -> LattigoPeer:
    require_go()
    return LattigoPeer()
