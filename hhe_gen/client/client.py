"""The client: CKKS (public- and secret-key) encryption, decryption and Rubato through an
accelerator, the same calls on every backend (:mod:`.backends`).

Parameters
----------
params : str or CKKSParams     a preset name or parameters
backend : str                  "model" | "amaranth" | "rtl" (= "verilator") | "soc-sim" | "board" (then ``board=dict(folder=...)``,
                               the build's folder of ``hhe-gen soc build -o``, or
                               ``board=dict(ip=..., csr_csv=..., info=...)``)
lanes : int                    the accelerator's lanes (rtl, soc-sim)
rubato : str or None           the Rubato set of a dual-mode accelerator ("128s", ...)
config : AcceleratorConfig     instead of params / lanes / rubato: the whole accelerator
                               (:class:`hhe_gen.engine.config.AcceleratorConfig`)

Members
-------
config : the resolved :class:`~hhe_gen.engine.config.AcceleratorConfig`
params, shape, layout, fmt : what the programs are assembled for
backend : :class:`.backends.Backend`
last : :class:`.backends.BackendRun`   the last program's end (cycles, error)

Every method raises RuntimeError naming the cause when the accelerator stops on an error.

Server-side CKKS (``mul_relin_rescale``) runs on an engine of its own with the basis-conversion
unit, Q and P built in (:func:`hhe_gen.engine.server_programs.server_shape`): the ISA model on the
``model`` backend, that engine in Verilator on ``rtl``.  The SoC backends refuse it: the SoC is the
client device, and its accelerator has neither the basis unit nor the buffers key switching needs.

Rubato (``rubato_encrypt``) needs a dual-mode accelerator (``rubato=``).  Its key block is written to
the accelerator's ordinary memory, not the SoC's key vault (which holds the CKKS secret key only).
"""

from __future__ import annotations

from fractions import Fraction

from hhe_gen.params.errors import ParameterError

__all__ = ["Client"]


class Client:
    """An accelerator, behind one API (module docstring)."""

    def __init__(self, params="toy", *, backend: str = "model", lanes: int = 2, rubato: str | None = None,
                 board: dict | None = None, config=None):
        from hhe_gen.engine.config import AcceleratorConfig
        from hhe_gen.engine.memory_map import MemoryMap

        from .backends import BACKENDS, backend_for
        if backend not in BACKENDS:
            raise ParameterError("backend", backend, "one of " + ", ".join(BACKENDS))
        if config is None:
            config = AcceleratorConfig(params, lanes, rubato=rubato)
        elif not isinstance(config, AcceleratorConfig):
            raise ParameterError("config", config, "a hhe_gen.engine.config.AcceleratorConfig")
        self.config = config.resolve()
        self.params, self.lanes, self.rubato = self.config.params, self.config.lanes, self.config.rubato
        self.shape, self.layout = self.config.shape, MemoryMap.for_params(self.params)
        self.fmt = self.config.fmt
        self.backend = backend_for(backend, self.config, **(board or {}) if backend == "board" else {})
        self.last = None
        self._message = 0
        self._server = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.backend.close()

    # -------------------------------------------------------------------------------------------
    def _run(self, words, **kw):
        self.last = run = self.backend.run(words, **kw)
        if run.error:
            raise RuntimeError(f"the accelerator ({self.backend.name}) stopped: {run.meaning}")
        return run

    def _target(self):
        from hhe_gen.engine.programs import NetworkTarget
        info = getattr(self.backend, "info", None) or getattr(getattr(self.backend, "soc", None), "info", None)
        self._message = (self._message + 1) & 0xFFFFFFFF
        if info:
            return NetworkTarget(ip=info["remote_ip"], dst_port=info["udp_port"], src_port=info["udp_port"],
                                 message=self._message)
        return NetworkTarget(message=self._message)

    def set_keys(self, keys) -> None:
        """Upload ``keys`` (:class:`hhe_gen.models.ckks.KeyPair`) and put them in NTT form on the
        accelerator (``key_setup``); the secret key goes where the backend keeps secrets."""
        from hhe_gen.engine import memory_map, programs
        image: dict = {}
        memory_map.write_keys(image, self.layout, self.params, keys)
        self.backend.write(image)
        self._run(programs.key_setup(self.params, self.shape, layout=self.layout).words)

    def encrypt(self, slots, *, seed, mode: str = "pk"):
        """The CKKS ciphertext of ``slots`` (N/2 complex values), encoded and encrypted on the
        accelerator with randomness from ``seed`` and sent by it as packets (near-network)."""
        from hhe_gen.engine import memory_map, programs
        if mode not in ("pk", "sk"):
            raise ParameterError("mode", mode, "pk (public key) or sk (secret key)")
        image: dict = {}
        memory_map.write_seed(image, self.layout, seed)
        memory_map.write_slots(image, self.layout, list(slots), self.fmt)
        self.backend.write(image)
        program = programs.encrypt_pk if mode == "pk" else programs.encrypt_sk
        run = self._run(program(self.params, self.shape, layout=self.layout, network=self._target()).words,
                        messages=1)
        if not run.messages:
            raise RuntimeError(f"the accelerator ({self.backend.name}) sent no complete ciphertext")
        return run.messages[0].ciphertext()

    def decrypt(self, ct) -> list[complex]:
        """The slots of ciphertext ``ct`` (any level), decrypted and decoded on the accelerator."""
        from hhe_gen.engine import memory_map, programs
        image: dict = {}
        memory_map.write_ciphertext(image, self.layout, self.params, ct)
        self.backend.write(image)
        level = len(ct.c0) - 1
        self._run(programs.decrypt(self.params, self.shape, level=level, layout=self.layout).words)
        out = self.layout.address("slots_out")
        words = self.backend.read(out, self.params.n)
        return memory_map.read_slots(dict(zip(range(out, out + self.params.n), words)), self.layout, self.fmt,
                                     self.config.word_bits)

    def mul_relin_rescale(self, ct_a, ct_b, rlk):
        """The homomorphic product of ciphertexts ``ct_a`` and ``ct_b`` (same level >= 1), relinearised
        with ``rlk`` (:class:`hhe_gen.models.ckks_eval.RelinKey`) and rescaled, computed by the
        server engine's ``mul_relin_rescale`` program; a ciphertext one level down (NTT form)."""
        from hhe_gen.engine import server_memory as sm
        from hhe_gen.engine import server_programs as sp
        from hhe_gen.models.ckks_eval import RelinKey
        if not isinstance(rlk, RelinKey):
            raise ParameterError("rlk", type(rlk).__name__, "a hhe_gen.models.ckks_eval.RelinKey")
        if ct_a.level != ct_b.level or ct_a.level < 1:
            raise ParameterError("ciphertext levels", f"{ct_a.level} and {ct_b.level}",
                                 "two ciphertexts at the same level >= 1")
        runner = self._server_runner()
        layout = sm.ServerMemoryMap.for_params(self.params)
        image: dict = {}
        sm.write_server_ciphertext(image, layout, self.params, ct_a, ("a0", "a1"))
        sm.write_server_ciphertext(image, layout, self.params, ct_b, ("b0", "b1"))
        sm.write_relin_key(image, layout, self.params, rlk)
        sm.write_constants(image, layout, self.params)
        runner.write(image)
        program = sp.mul_relin_rescale(self.params, runner.config.shape, level=ct_a.level, layout=layout)
        self.last = run = runner.run(program.words)
        if run.error:
            raise RuntimeError(f"the server engine ({self.backend.name}) stopped: {run.meaning}")
        rows = ct_a.level
        words = {}
        for name in ("r0", "r1"):
            for i in range(rows):
                first = layout.address(name, i)
                words.update(zip(range(first, first + self.params.n), runner.read(first, self.params.n)))
        scale = Fraction(ct_a.scale) * Fraction(ct_b.scale) / self.params.moduli[ct_a.level]
        return sm.read_server_ciphertext(words, layout, self.params, ("r0", "r1"), rows,
                                         int(scale) if scale.denominator == 1 else float(scale))

    def _server_runner(self):
        if self._server is None:
            from .backends import server_runner
            self._server = server_runner(self.params, self.backend.name, self.lanes)
        return self._server

    def rubato_encrypt(self, message, *, key, nonce: int, noise_seed: int, counter: int = 0) -> list[int]:
        """The Rubato ciphertext words of ``message`` (a whole number of blocks of l values, |x| < 8)
        under ``key`` (n words < q), ``nonce`` and ``noise_seed`` (64-bit), blocks numbered from
        ``counter``: encrypted by the accelerator's Rubato unit and sent as packets."""
        from hhe_gen.engine.rubato_program import rubato_encrypt, write_key_block, write_scaled_message
        from hhe_gen.models.wire import Kind
        from hhe_gen.params.rubato import rubato_params
        if self.rubato is None:
            raise ParameterError("rubato", None, "a dual-mode accelerator: Client(..., rubato=SET)")
        rp = rubato_params(self.rubato)
        message = list(message)
        blocks = len(message) // rp.l
        key_at = self.layout.base + self.layout.size           # after the CKKS memory map
        msg_at = key_at + 128
        if not 1 <= blocks <= min(255, self.params.n // rp.l) or len(message) > 256:
            raise ParameterError("message", f"<{len(message)} values>",
                                 f"1 .. {min(255, self.params.n // rp.l, 256 // rp.l)} blocks of l = {rp.l} values")
        image: dict = {}
        write_key_block(image, key_at, rp, key, nonce, noise_seed, counter)
        write_scaled_message(image, msg_at, rp, message, self.config.word_bits)
        self.backend.write(image)
        program = rubato_encrypt(self.shape, self.params.n, key_address=key_at, message_address=msg_at,
                                 blocks=blocks, network=self._target())
        run = self._run(program.words, messages=1, kinds=(Kind.RUBATO,))
        if not run.messages:
            raise RuntimeError(f"the accelerator ({self.backend.name}) sent no complete Rubato ciphertext")
        return list(run.messages[0].polys[Kind.RUBATO][0][:len(message)])
