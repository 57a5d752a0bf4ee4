"""The whole SoC in Verilator with Ethernet (a TAP in a network namespace), end to end at the toy
ring: keys over Etherbone, near-network CKKS encryption decrypted by Lattigo, Rubato, the way
back through ``recv``, and no secret-key word readable over the bus."""

import os

import pytest

from hhe_gen.soc.sim_build import sim_support

pytestmark = [pytest.mark.toolchain]

REASON = sim_support()


@pytest.fixture(scope="module")
def report():
    if REASON is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the SoC simulation: {REASON}")
        pytest.skip(REASON)
    from hhe_gen.apps.soc_sim import run_soc_sim
    return run_soc_sim("toy", 2, "128s", use_lattigo=True)


def test_near_network_ciphertexts_equal_the_model_and_decrypt(report):
    for name in ("encrypt_pk", "encrypt_sk"):
        e = report[name]
        assert e["status"] == "ok" and e["messages"] == 1, name
        assert e["equal_to_model"], f"{name}: the packets that left the SoC differ from the ISA model's"
        assert e["packets"] == 4, name       # c0 and c1, one row per prime, 64 coefficients per packet
        assert e["precision"]["mean_bits"] > 10, name


def test_rubato_blocks_leave_the_soc_and_decrypt(report):
    e = report["rubato"]
    assert e["error_cause"] == 0 and e["equal_to_model"] and e["max_abs_error"] < 2 ** -10


def test_the_rubato_key_lives_in_the_vault_and_reads_back_as_nothing(report):
    e = report["rubato"]
    assert e["key_in_vault"] and e["key_words_readable"] == 0


def test_a_ciphertext_sent_to_the_soc_comes_back_as_the_message(report):
    e = report["decrypt_network"]
    assert e["status"] == "ok" and e["packets_received"] == e["packets_sent"] == 2 and e["rx_dropped"] == 0
    assert e["equal_to_model"], "the slots the SoC wrote differ from the ISA model's"


def test_no_secret_key_word_is_readable_over_the_bus(report):
    s = report["secrecy"]
    # sk and the NTT(s) rows, and the Rubato key slot (128 words), in 32-bit words
    assert s["csrs_read"] > 40 and s["vault_words_read"] == 2 * (3 * 64 + 128)
    assert s["vault_nonzero"] == 0 and s["secret_words_found"] == 0


def test_firmware_answers_and_checks_the_key_upload(report):
    f = report["firmware"]
    assert f["version"] == 1 and f["n"] == 64 and f["host_resolved"]
    assert f["keycheck"] == "ok" and f["vault_words"] == 2 * 3 * 64


def test_bad_input_gets_error_codes_and_the_soc_goes_on(report):
    b = report["bad_input"]
    assert b["unknown_command"] == "unknown command" and b["empty_program"] == "bad argument"
    assert b["malformed_word"] == "accelerator error cause 1"      # UNKNOWN_OPCODE
    assert b["next_program"] == "ok"


def test_the_next_run_after_an_error_runs_without_an_abort(report):
    """A RUN is a new program: the firmware clears the error the last one stopped on (docs/soc.md);
    before, the error stayed set and the next RUN failed at once with the old cause."""
    b = report["bad_input"]
    assert b["malformed_word"] == "accelerator error cause 1" and b["malformed_word_position"] == 0
    assert b["run_after_error"] == "ok"


def test_an_error_position_counts_within_the_program(report):
    """A malformed word at position k, in a program that follows a good one with no abort between,
    reports k (not the words decoded since the last abort)."""
    b = report["bad_input"]
    assert b["malformed_at_k"] == "accelerator error cause 1"
    assert b["malformed_at_k_position"] == b["malformed_at"] == 5


def test_a_garbage_flood_and_an_abort_leave_the_way_back_clear(report):
    """Garbage UDP frames fill the receive FIFO while no recv runs: the packets that do not fit are
    dropped whole (the FIFO holds whole frames only, no cut packet), the host's abort empties it,
    and the next recv (the way back, after the flood) takes a real ciphertext and decrypts it."""
    f = report["bad_input"]["flood"]
    assert f["arrived"] == f["frames"] == 8 and f["beats_each"] == 367
    assert f["level_before_abort"] == 2 * 367 and f["rx_dropped"] == 6      # 1024 beats: two whole frames
    assert f["level_after_abort"] == 0
    e = report["decrypt_network"]
    assert e["status"] == "ok" and e["equal_to_model"] and e["packets_received"] == 2 and e["rx_dropped"] == 0


def test_the_firmware_waits_on_the_accelerators_interrupt(report):
    """RUN sleeps on the EventManager's interrupt (done: busy fell; error: error rose), not on the
    status CSR: a run ends with at least one interrupt taken, a program stopped on an error too.
    Were the interrupt lost, the run would end in the firmware's time-out instead."""
    assert report["key_setup"]["status"] == "ok" and report["key_setup"]["interrupts"] >= 1
    assert report["bad_input"]["malformed_word_interrupts"] >= 1


def test_cpu_driven_path_sends_the_same_ciphertext_slower(report):
    c = report["cpu_driven"]
    assert c["status"] == "ok" and c["packets"] == 4 and c["equal_to_model"]
    # in time: RUN's busy cycles count the accelerator's clock, SEND's the system clock
    assert c["total_seconds"] == pytest.approx(c["store_cycles"] / c["accel_hz"] + c["send_cycles"] / c["sys_hz"],
                                               abs=1e-6)
    assert c["total_seconds"] > c["near_network_seconds"] == pytest.approx(c["near_network_cycles"] / c["accel_hz"],
                                                                           abs=1e-6)
    assert c["speedup"] == pytest.approx(c["total_seconds"] / c["near_network_seconds"], abs=0.01)


def test_the_host_can_drive_the_accelerator_without_the_firmware(report):
    d, f = report["key_setup_direct"], report["key_setup"]
    assert d["error_cause"] == 0
    # the program is loaded whole with hold either way: the same cycles within the start-up jitter
    assert abs(d["busy_cycles"] - f["busy_cycles"]) < 64
    assert d["units"]["ntt"]["tasks"] == 6 and d["units"]["memory"]["tasks"] == 11   # 2 primes x (3 NTT, 5 ld/st) + sk


def test_program_cycles_are_the_accelerators(report):
    # the program is loaded whole with hold, so the busy cycles are the engine's own, not the host's
    assert 0 < report["encrypt_pk"]["busy_cycles"] < 10_000
    assert report["ok"]


@pytest.fixture(scope="module")
def report_own_clock():
    if REASON is not None:
        pytest.skip(REASON)
    from hhe_gen.apps.soc_sim import run_soc_sim
    return run_soc_sim("toy", 2, "128s", use_lattigo=False, accel_clk_freq=800_000)


def test_the_accelerator_on_a_clock_of_its_own_gives_the_same_words(report_own_clock):
    """The crossing a board uses when the accelerator cannot meet the system clock: asynchronous
    FIFOs, whole packets to LiteEth, the status as one snapshot (0.8 MHz against 1 MHz)."""
    r = report_own_clock
    assert r["accel_clk_freq"] == 800_000
    for name in ("encrypt_pk", "encrypt_sk"):
        assert r[name]["status"] == "ok" and r[name]["equal_to_model"] and r[name]["packets"] == 4, name
    assert r["rubato"]["equal_to_model"] and r["rubato"]["error_cause"] == 0
    e = r["decrypt_network"]
    assert e["equal_to_model"] and e["packets_received"] == 2 and e["rx_dropped"] == 0
    assert r["cpu_driven"]["equal_to_model"]
    assert r["secrecy"]["secret_words_found"] == 0 and r["secrecy"]["vault_nonzero"] == 0
    b = r["bad_input"]
    assert b["malformed_word"] == "accelerator error cause 1" and b["next_program"] == "ok"
    assert b["run_after_error"] == "ok" and b["malformed_at_k_position"] == b["malformed_at"]
    assert b["malformed_word_interrupts"] >= 1 and r["key_setup"]["interrupts"] >= 1   # the events in sys
    assert r["key_setup_direct"]["units"]["ntt"]["tasks"] == 6      # the counters crossed with the status
    assert r["firmware"]["keycheck"] == "ok" and r["key_setup_direct"]["error_cause"] == 0


def test_a_garbage_flood_and_an_abort_leave_the_crossing_clear(report_own_clock):
    """On a clock of its own the first kept packet's head (the receive crossing's 16 beats) has gone
    on past the receive FIFO; the abort drains it there, and the way back after it is exact."""
    f = report_own_clock["bad_input"]["flood"]
    assert f["ok"] and f["level_after_abort"] == 0
    assert f["kept"] * f["beats_each"] - f["level_before_abort"] == f["in_crossing"] <= 16
    assert report_own_clock["decrypt_network"]["equal_to_model"]
    assert report_own_clock["ok"]


def test_cli_refuses_an_unknown_preset_before_building(capsys):
    from hhe_gen.apps.cli import main
    assert main(["soc", "sim", "--params", "no-such-preset"]) == 2
    assert "no-such-preset" in capsys.readouterr().err


@pytest.mark.slow
def test_dna_hhe_soc_end_to_end():
    """N = 2^13, 3 x 54-bit primes, 2 lanes, dual mode: the whole flow, the CPU's SEND of 276
    packets included (build and run: 29 minutes on 2 cores; docs/soc.md)."""
    if REASON is not None:
        pytest.skip(REASON)
    from hhe_gen.apps.soc_sim import run_soc_sim
    r = run_soc_sim("dna-hhe", 2, "128s")
    assert r["ok"], r
    assert r["encrypt_pk"]["precision"]["mean_bits"] > 25
    assert r["cpu_driven"]["equal_to_model"] and r["cpu_driven"]["packets"] == 276
    assert r["decrypt_network"]["equal_to_model"] and r["rubato"]["equal_to_model"]
