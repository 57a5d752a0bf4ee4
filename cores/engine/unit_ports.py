"""How a unit joins the engine: it declares its kind (the task manager's unit port it takes tasks
on; a unit with a shared datapath declares the other kinds it takes too, ``also``: they come on
the same port, one task at a time, :func:`task_groups`) and the buffer ports it reads and writes,
and the engine allocates the buffer file's ports by enumerating the units in the order they were
registered.

A unit's ``declaration`` (:class:`UnitDeclaration`) names members of its own signature: each
``reads`` member is a :func:`~.buffers.read_port_signature` port, each ``writes`` member a
:func:`~.buffers.write_port_signature` port, ``bank`` the member on the buffer file's bank port
(:func:`~.buffers.bank_access_signature`: the NTT in place).  :class:`PortAllocation` gives read
port k of the buffer file to the k-th declared read member, write port k likewise; the manifest
holds it (``buffer_ports``).  Adding, removing or merging a unit is its registration in
:class:`~.engine.Engine`; no port number is written by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import isa

__all__ = ["UnitDeclaration", "PortAllocation", "task_groups"]


@dataclass(frozen=True)
class UnitDeclaration:
    """What a unit takes from the engine: tasks of ``kind`` (and of the kinds ``also``: a shared
    datapath, on the one task port of ``kind``) and the buffer ports ``reads``, ``writes`` (member
    names, in the order the unit numbers them) and ``bank``."""
    kind: isa.Unit
    reads: tuple = ()
    writes: tuple = ()
    bank: str | None = None
    also: tuple = ()

    @property
    def kinds(self) -> tuple:
        """Every task kind the unit takes, ``kind`` first."""
        return (self.kind, *self.also)


def task_groups(units) -> tuple:
    """The groups of task kinds that one unit takes (the task manager's ``groups``), from the
    (name, unit) pairs' declarations."""
    return tuple(unit.declaration.kinds for _, unit in units if unit.declaration.also)


@dataclass(frozen=True)
class PortAllocation:
    """The buffer file's ports, given out in registration order: ``reads[k]`` / ``writes[k]`` is
    the (unit name, member) on read / write port k; ``bank`` the (unit name, member) on the bank
    port, or None."""
    reads: tuple
    writes: tuple
    bank: tuple | None

    @classmethod
    def of(cls, units) -> "PortAllocation":
        """The allocation of ``units``: (name, unit) pairs in registration order, each unit with a
        ``declaration``.  At most one unit takes the bank port."""
        reads, writes, bank = [], [], None
        for name, unit in units:
            d = unit.declaration
            reads += [(name, member) for member in d.reads]
            writes += [(name, member) for member in d.writes]
            if d.bank is not None:
                if bank is not None:
                    raise ValueError(f"two units on the bank port: {bank[0]} and {name}")
                bank = (name, d.bank)
        return cls(tuple(reads), tuple(writes), bank)

    def describe(self) -> dict:
        """JSON-ready: ``{"read": ["memory_unit.rd", ...], "write": [...], "bank": "ntt_unit.bank" | None}``
        (list index = port number)."""
        return {"read": [f"{u}.{m}" for u, m in self.reads], "write": [f"{u}.{m}" for u, m in self.writes],
                "bank": None if self.bank is None else f"{self.bank[0]}.{self.bank[1]}"}
