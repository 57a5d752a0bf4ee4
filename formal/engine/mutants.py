"""Deliberately broken task managers: each property of :mod:`.scheduler` must refute one of them
(registered with ``expect="FAIL"`` in :mod:`.proofs`), which shows the property can find that kind
of bug.

=============================  ============  =====================================================
mutant                         property      bug
=============================  ============  =====================================================
:class:`NoWarManager`          hazard        the scoreboard ignores write-after-read hazards
:class:`LeakySerialManager`    serial        a serialising entry does not hold younger ones back
:class:`LostDoneManager`       completion    a ``done`` in a cycle with an insertion is lost
:class:`ForgetfulErrorManager` error         after an error, well-formed words still enter
=============================  ============  =====================================================
"""

from __future__ import annotations

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.scoreboard import Scoreboard
from hhe_gen.cores.engine.task_manager import TaskManager
from hhe_gen.cores.unused import mark_unused

__all__ = ["NoWarManager", "LeakySerialManager", "LostDoneManager", "ForgetfulErrorManager"]


class NoWarScoreboard(Scoreboard):
    """Only RAW / WAW count as hazards."""

    def _hazard(self, i, entry):
        return (self.e_writes[i] & (entry.reads | entry.writes)).any()


class LeakySerialScoreboard(Scoreboard):
    """An older serialising entry does not block (only hazards and the in-order rule do)."""

    def _stops(self, i, entry):
        return self._hazard(i, entry)


class LostDoneScoreboard(Scoreboard):
    """A completion arriving in a cycle with an insertion is not recorded."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        for j in range(self.window):
            with m.If(self.insert & self.valid[j]):
                m.d.sync += self.e_done[j].eq(self.e_done[j])
        return m


def _with_scoreboard(scoreboard_class, doc):
    class Mutant(TaskManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            mark_unused(self.scoreboard)
            self.scoreboard = scoreboard_class(self.window, isa.resource_count(self.shape), self.units,
                                               self.ooo, self.exclusive_reads)
    Mutant.__doc__ = doc
    return Mutant


NoWarManager = _with_scoreboard(NoWarScoreboard, "TaskManager with :class:`NoWarScoreboard`.")
LeakySerialManager = _with_scoreboard(LeakySerialScoreboard,
                                      "TaskManager with :class:`LeakySerialScoreboard`.")
LostDoneManager = _with_scoreboard(LostDoneScoreboard, "TaskManager with :class:`LostDoneScoreboard`.")
for _cls, _name in ((NoWarManager, "NoWarManager"), (LeakySerialManager, "LeakySerialManager"),
                    (LostDoneManager, "LostDoneManager")):
    _cls.__name__ = _cls.__qualname__ = _name


class ForgetfulErrorManager(TaskManager):
    """Drops only the malformed words themselves: after an error the rest still runs."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.drop.eq(self.decoder.cause != 0)
        return m
