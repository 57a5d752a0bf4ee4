"""Elaboratables built on purpose without being elaborated, and Amaranth's warning about them.

Amaranth warns "created but never used" (``UnusedElaboratable``) when an Elaboratable is garbage
collected without having been elaborated.  Some are built that way on purpose: a probe built only
to read a latency or a plan, a prototype whose parameters are looked at, a component whose
``__init__`` refused a bad parameter half-way.  This module is the one place that says so to
Amaranth (through its ``MustUse`` flag); everything else calls the functions below.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

from hhe_gen.params.errors import ParameterError

__all__ = ["mark_unused", "quiet_on_error", "validating"]


def mark_unused(*elaboratables, deep: bool = False):
    """Declare that ``elaboratables`` will not be elaborated, so Amaranth does not warn about them.

    Parameters
    ----------
    *elaboratables   the objects (anything else, such as None, is ignored)
    deep : bool      also the elaboratables they hold in attributes (directly or in lists and
                     tuples): the parts a half-built component had already made

    Returns
    -------
    the first object, so ``probe = mark_unused(Unit(...))`` reads as one statement
    """
    for item in elaboratables:
        _mark(item, deep, set())
    return elaboratables[0] if elaboratables else None


def _mark(item, deep: bool, seen: set) -> None:
    if not hasattr(item, "elaborate") or id(item) in seen:
        return
    seen.add(id(item))
    item._MustUse__silence = True
    if deep:
        for value in list(vars(item).values()):
            for part in value if isinstance(value, (list, tuple)) else [value]:
                _mark(part, deep, seen)


def quiet_on_error(init):
    """Decorator for an Elaboratable's ``__init__``: when it raises (a bad parameter), the half-built
    object and the parts it made are marked unused before the exception goes on."""
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except Exception:
            mark_unused(self, deep=True)
            raise
    return wrapper


@contextmanager
def validating(component):
    """``with validating(self): <parameter checks>``: on a ParameterError the half-built component
    (and what it made) is marked unused and the error goes on."""
    try:
        yield
    except ParameterError:
        mark_unused(component, deep=True)
        raise
