"""One comparison against the ISA model: a backend with the golden model beside it.

:class:`CheckedBackend` wraps any backend (:mod:`.backends`): every ``write`` goes to the backend
and to an ISA model of the same accelerator, every ``run`` runs on both, and the result is a
:class:`Checked` run: the backend's run, the model's, and what differs (error status and position,
notify codes, packets, messages, memory, and on the model the cycles are None).  The demo, ``accel
run``, ``soc sim``, the client's tests and the benchmarks compare through it, so "bit-exact with the
ISA model" means the same thing everywhere.  Packets are compared payload for payload where the
backend sees them (the model and the RTL backends); the messages a run was asked to receive are
compared coefficient for coefficient on every backend (the SoC backends give only the messages the
host reassembled).

Memory is compared over every word the model's memory holds after the run (the words a program
reads or writes); ``memory=False`` skips it (the SoC backends, whose memory is read over Etherbone:
:meth:`CheckedBackend.check_memory` compares the words a caller names).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .backends import Backend, BackendRun, ModelBackend

__all__ = ["Checked", "CheckedBackend"]


@dataclass
class Checked:
    """A program run on a backend and on the ISA model: ``run`` (the backend's), ``expected`` (the
    model's), ``differences`` (one line each; empty: bit-exact)."""
    run: BackendRun
    expected: BackendRun
    differences: list = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.differences


class CheckedBackend:
    """``backend`` with the ISA model of its accelerator beside it (module docstring)."""

    def __init__(self, backend: Backend, *, memory: bool = True):
        self.backend = backend
        self.name = backend.name
        self.config = backend.config
        self.model = backend if isinstance(backend, ModelBackend) else ModelBackend(backend.config)
        self.compare_memory = memory and self.model is not backend

    def write(self, image: dict, **options):
        """``image`` into the backend (``options``: its own, e.g. the SoC's ``progress``; what it
        returns) and into the model."""
        out = self.backend.write(image, **options)
        if self.model is not self.backend:
            self.model.write(image)
        return out

    def read(self, first: int, count: int) -> list[int]:
        return self.backend.read(first, count)

    def run(self, words, **kw) -> Checked:
        """``words`` on the backend and on the model (same keywords: ``messages``, ``udp_in``,
        ``kinds``); the two runs and their differences."""
        got = self.backend.run(words, **kw)
        if self.model is self.backend:
            return Checked(got, got, [])
        want = self.model.run(words, **kw)
        diff = []
        if (got.error, got.position) != (want.error, want.position) and not (
                got.position is None and got.error == want.error):
            diff.append(f"error {got.error} at {got.position}, the model's {want.error} at {want.position}")
        if got.notify and tuple(got.notify) != tuple(want.notify):
            diff.append(f"notify codes {list(got.notify)}, the model's {list(want.notify)}")
        if self.backend.sees_packets and got.packets != want.packets:
            first = next((i for i, (a, b) in enumerate(zip(got.packets, want.packets)) if a != b),
                         min(len(got.packets), len(want.packets)))
            diff.append(f"packets: {len(got.packets)} sent, the model {len(want.packets)}; first difference at "
                        f"packet {first}")
        if len(got.messages) != len(want.messages) or any(
                a.polys != b.polys for a, b in zip(got.messages, want.messages)):
            first = next((i for i, (a, b) in enumerate(zip(got.messages, want.messages)) if a.polys != b.polys),
                         min(len(got.messages), len(want.messages)))
            diff.append(f"messages: {len(got.messages)} received, the model's {len(want.messages)}; first "
                        f"difference at message {first}")
        if self.compare_memory:
            diff += self.check_memory(sorted(self.model.model.memory))
        return Checked(got, want, diff)

    def check_memory(self, addresses) -> list[str]:
        """The backend's words at ``addresses`` against the model's (absent there: 0); one line
        if any differ, else none."""
        addresses = sorted(addresses)
        memory = self.model.model.memory
        got = dict(zip(addresses, self._read_all(addresses)))
        wrong = [a for a in addresses if got[a] != memory.get(a, 0)]
        if not wrong:
            return []
        return [f"memory: {len(wrong)} of {len(addresses)} words differ, the first at {wrong[0]:#x}"]

    def memory(self) -> dict:
        """The backend's memory at every address the ISA model's memory holds ({address: word})."""
        if self.model is self.backend:
            return dict(self.model.model.memory)
        addresses = sorted(self.model.model.memory)
        return dict(zip(addresses, self._read_all(addresses)))

    def _read_all(self, addresses) -> list[int]:
        """The backend's words at ``addresses`` (sorted), read in runs of consecutive addresses."""
        out, i = [], 0
        while i < len(addresses):
            j = i
            while j + 1 < len(addresses) and addresses[j + 1] == addresses[j] + 1:
                j += 1
            out += self.backend.read(addresses[i], j - i + 1)
            i = j + 1
        return out

    def close(self) -> None:
        self.backend.close()
