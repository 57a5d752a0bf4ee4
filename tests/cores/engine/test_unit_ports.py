"""The engine's units by registration (cores/engine/unit_ports.py): each unit declares its kind and
buffer ports, the buffer file has exactly the ports the built units declare, given out in
registration order, and the manifest names which unit port holds which buffer-file port."""

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import UNITS
from hhe_gen.cores.engine.unit_ports import PortAllocation, UnitDeclaration
from hhe_gen.cores.unused import mark_unused
from hhe_gen.engine.config import AcceleratorConfig


def _engine(**choices):
    return mark_unused(AcceleratorConfig("toy", 2, **choices).engine(), deep=True)


def test_the_buffer_file_has_the_declared_ports_in_registration_order():
    engine = _engine()                                  # toy: NTT in place, codec of one row, network unit
    ports = engine.buffer_ports.describe()
    assert ports["bank"] == "ntt_unit.bank"
    assert ports["read"] == ["memory_unit.rd", "pointwise_unit.rd0", "pointwise_unit.rd1", "pointwise_unit.rd2",
                             "codec_unit.rd", "codec_unit.rd_row0", "network_unit.rd"]
    assert ports["write"] == ["memory_unit.wr", "pointwise_unit.wr", "sampler_unit.wr", "codec_unit.wr",
                              "network_unit.wr"]
    assert (engine.buffers_file.read_ports, engine.buffers_file.write_ports) == (7, 5)
    assert [name for name, _ in engine.units] == [u for u in UNITS if u not in ("crypto_unit", "rubato_unit",
                                                                               "basis_unit")]
    assert {unit.declaration.kind for _, unit in engine.units} == set(engine.shape.units)


@pytest.mark.parametrize("in_place", [True, False])
def test_the_shared_datapath_takes_the_ntt_pointwise_and_codec_kinds_on_one_unit(in_place):
    """The crypto unit: one task port for NTT, POINTWISE and CODEC; its read port k is every
    sequencer's k-th read (pointwise a, b, c; the codec's slots and decode's row; the streaming NTT's
    read), its write port theirs; the bank port in place."""
    engine = _engine(datapath="shared", ntt_in_place=in_place)
    ports = engine.buffer_ports.describe()
    assert ports["bank"] == ("crypto_unit.bank" if in_place else None)
    assert ports["read"] == ["memory_unit.rd", "crypto_unit.rd0", "crypto_unit.rd1", "crypto_unit.rd2",
                             "network_unit.rd"]
    assert ports["write"] == ["memory_unit.wr", "crypto_unit.wr", "sampler_unit.wr", "network_unit.wr"]
    assert {"ntt_unit", "pointwise_unit", "codec_unit"}.isdisjoint(dict(engine.units))
    assert isa.Unit.POINTWISE not in engine.manager.units and isa.Unit.CODEC not in engine.manager.units
    for kind in (isa.Unit.POINTWISE, isa.Unit.CODEC):
        assert engine.manager.unit_port(kind) is engine.manager.unit_port(isa.Unit.NTT)
    kinds = {kind for _, unit in engine.units for kind in unit.declaration.kinds}
    assert kinds == set(engine.shape.units)
    separate = _engine(ntt_in_place=in_place).buffer_ports
    # the codec's two reads and its write, and the streaming NTT's read and write, fold into the
    # pointwise sequencer's ports
    assert len(ports["read"]) == len(separate.reads) - 2 - (not in_place)
    assert len(ports["write"]) == len(separate.writes) - 1 - (not in_place)


def test_a_streaming_ntt_and_the_rubato_unit_take_their_own_ports():
    engine = _engine(ntt_in_place=False, rubato="128s", network=False)
    ports = engine.buffer_ports.describe()
    assert ports["bank"] is None and not engine.ntt_in_place
    assert ports["read"][:2] == ["memory_unit.rd", "ntt_unit.rd"] and ports["read"][-1] == "rubato_unit.rd"
    assert ports["write"][:2] == ["memory_unit.wr", "ntt_unit.wr"] and ports["write"][-1] == "rubato_unit.wr"
    assert engine.buffers_file.read_ports == len(ports["read"])


def test_the_manifest_holds_the_allocation(tmp_path):
    from hhe_gen.engine.generate_accel import generate_accel
    config = AcceleratorConfig("toy", 2)
    man = generate_accel(config, tmp_path, testbench=False)["manifest"]
    assert man["buffer_ports"] == _engine().buffer_ports.describe()


def test_one_bank_port():
    class Unit:
        def __init__(self, d):
            self.declaration = d
    two = [("a", Unit(UnitDeclaration(isa.Unit.NTT, bank="bank"))), ("b", Unit(UnitDeclaration(isa.Unit.NTT, bank="x")))]
    with pytest.raises(ValueError, match="two units on the bank port"):
        PortAllocation.of(two)
    alloc = PortAllocation.of([("a", Unit(UnitDeclaration(isa.Unit.MEMORY, reads=("r0", "r1"), writes=("w",))))])
    assert alloc.reads == (("a", "r0"), ("a", "r1")) and alloc.writes == (("a", "w"),) and alloc.bank is None


def test_dual_mode_on_the_shared_datapath_adds_no_buffer_port():
    """Rubato joins the crypto unit (its Feistel on the array's Z_t field): its read and write are the
    crypto unit's first ports, RUBATO tasks come on the crypto unit's port."""
    engine = _engine(datapath="shared", rubato="128s")
    assert engine.buffer_ports.describe() == _engine(datapath="shared").buffer_ports.describe()
    assert engine.rubato_unit is None and engine.crypto_unit.rubato_unit is not None
    assert engine.manager.unit_port(isa.Unit.RUBATO) is engine.manager.unit_port(isa.Unit.NTT)
    assert engine.crypto_unit.array_plan.fields == ("zq", "zt", "complex")
    assert engine.shape == AcceleratorConfig("toy", 2, datapath="shared", rubato="128s").shape
