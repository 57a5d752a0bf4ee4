"""Build and call the Lattigo v6 test peer, the independent reference for hhe-gen's CKKS models.

The peer is a small Go program (package data ``hhe_gen.host.lattigo_peer``) pinned to ``github.com/tuneinsight/lattigo/v6 v6.1.1``.
:class:`LattigoPeer` builds it once with ``go build`` into a cache directory keyed by a hash of
its sources and of the Go version, then runs ``peer OP`` with one JSON request on stdin and
reads one JSON answer from stdout.

JSON API (docs/interchange.md: integers only, coefficient X^k at index k, one row per RNS
prime; "params" is ``{"LogN", "Q", "LogDefaultScale", "P"?}``):

=========  ==========================================================  ===========================
op         request                                                     answer
=========  ==========================================================  ===========================
version    ``{}``                                                      ``{"lattigo", "go"}``
primes     ``{"LogN", "Q"}``                                           ``{"g": [..], "psi": [..]}``
ntt        ``{"LogN", "Q", "coeffs": rows}``                           ``{"ntt": rows}``
intt       ``{"LogN", "Q", "ntt": rows}``                              ``{"coeffs": rows}``
encode     ``{"params", "slots", "level"?, "scale"?}``                 ``{"coeffs": rows}``
decode     ``{"params", "coeffs": rows, "scale"?}``                    ``{"re", "im"}`` (N/2 each)
decrypt    ``{"params", "sk", "ciphertext"}``                          ``{"re", "im", "coeffs"}``
encrypt    ``{"params", "slots", "sk" | "keys", "level"?, "scale"?,    ciphertext (coeff form)
           "seed"?}``
keygen     ``{"params", "seed"?}``                                     keys
eval       ``{"params" (with "P" for mul), "sk", "op": "add"|"sub"|    ciphertext (coeff form)
           "mul", "a", "b", "rescale"?, "rlk"?}``
rlk        ``{"params" (with "P"), "sk"}``                             relinearisation key
tensor     ``{"params", "a", "b"}``                                    degree-2 ciphertext
relinearize ``{"params" (with "P"), "ciphertext" (degree 2), "rlk"}``  ciphertext (coeff form)
rescale    ``{"params", "ciphertext"}``                                ciphertext, one level down
basis      ``{"LogN", "Q", "P", "step", "rows"}``                      ``{"rows"}`` / ``{"digits"}``
=========  ==========================================================  ===========================

- ``g`` is the primitive root Lattigo picks per prime, ``psi`` the 2N-th root its NTT uses
  (read back from Lattigo's twiddle table). NTT order: ``NTT(a)[j] = a(psi^(2*brv(j)+1))``.
- ``slots`` is ``{"re": [..], "im": [..]}``; fewer than N/2 values means the rest are 0.
  ``scale`` defaults to 2^LogDefaultScale and ``level`` to the top level.
- ``sk`` is N signed integers (the secret's coefficients). The peer reduces them modulo every
  prime of Q and P, then applies Lattigo's NTT and Montgomery form, which is how Lattigo stores
  its secret key; keys exported by ``keygen`` go the other way (IMForm, INTT, centre).
- ciphertexts are ``{"scale", "form": "coeff"|"ntt", "c0", "c1", "c2"?}`` (``c2``: degree 2, a
  tensor product before relinearisation); as many rows as the level plus one. Answers are always
  in coefficient form.
- keys are ``{"N", "Q", "sk", "pk0", "pk1"}`` with pk = (-a*s + e, a) over Q, coefficient form.
- ``encrypt`` with ``keys`` is Lattigo's public-key encryption with that pk (over Q, no P);
  with ``sk`` its secret-key encryption. ``seed`` (any JSON value; its JSON text keys Lattigo's
  keyed PRNG) fixes the uniform ``a`` of secret-key encryption and keygen (and keygen's secret);
  Lattigo's Gaussian and ternary noise in encryption always come from fresh randomness.
- ``eval``: add/sub with Lattigo's evaluator; mul is MulRelin with the given ``rlk`` (or, without
  one, a key Lattigo makes from ``sk``; needs ``P``) followed by Rescale unless ``"rescale": false``.
- a relinearisation key is ``{"levelQ", "levelP", "digits": [{"b": rows, "a": rows}, ..]}``: one
  digit per element of Lattigo's RNS gadget decomposition (groups of levelP + 1 primes of Q), rows
  over Q then P, coefficient form, plain residues (Lattigo's NTT and Montgomery forms undone).
- ``tensor``, ``relinearize`` and ``rescale`` are Lattigo's Mul (no relinearisation),
  Relinearize and Rescale alone, so each step of a multiplication can be compared.
- ``basis`` runs one of Lattigo's RNS basis conversions on coefficient rows: ``"mod_up"``
  (ModUpQtoP, rows over Q[0..L] -> P), ``"mod_down"`` (ModDownQPtoQ, rows over Q[0..L] then P ->
  Q[0..L]) or ``"decompose"`` (DecomposeAndSplit, one digit per gadget group, rows over Q[0..L]
  then P); residues reduced to [0, q).

Bad input makes the peer exit non-zero with a message on stderr; :meth:`LattigoPeer.call` raises
:class:`LattigoError` carrying that message.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.filelock import locked

__all__ = [
    "LATTIGO_VERSION", "MIN_GO_VERSION", "OPS", "GoMissing", "LattigoError", "LattigoPeer",
    "cache_dir", "ciphertext_json", "default_peer", "find_go", "go_available", "params_json",
    "peer_source_dir", "slots_from_json", "slots_json",
]

#: The Lattigo module version pinned in the peer's go.mod.
LATTIGO_VERSION = "v6.1.1"
#: Oldest Go toolchain the peer builds with (Lattigo v6 needs 1.21).
MIN_GO_VERSION = (1, 21)
#: The operations the peer answers.
OPS = ("version", "primes", "ntt", "intt", "encode", "decode", "decrypt", "encrypt", "keygen",
       "eval", "rlk", "tensor", "relinearize", "rescale", "basis")

_GO_FALLBACK = Path("/usr/local/go/bin/go")
_SOURCE_PATTERNS = ("*.go", "go.mod", "go.sum")
_INSTALL_HINT = ("install Go >= {}.{}: `apt-get install golang` (Debian/Ubuntu) or the tarball from "
                 "https://go.dev/dl/ unpacked to /usr/local/go, with its bin/ on PATH")


class GoMissing(RuntimeError):
    """No usable Go toolchain, so the Lattigo peer cannot be built.

    The message names Go, says why it is unusable and how to install it.
    """

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"the Lattigo peer needs the Go toolchain: {reason}; "
                         + _INSTALL_HINT.format(*MIN_GO_VERSION))


class LattigoError(RuntimeError):
    """The peer rejected a request or failed.

    Members
    -------
    op : str          the operation that failed
    stderr : str      the peer's message
    returncode : int  its exit status
    """

    def __init__(self, op: str, stderr: str, returncode: int):
        self.op = op
        self.stderr = stderr.strip()
        self.returncode = returncode
        super().__init__(f"Lattigo peer '{op}' failed (exit {returncode}): {self.stderr}")


def peer_source_dir() -> Path:
    """The Go source of the peer (package data ``hhe_gen.host.lattigo_peer``).

    Returns
    -------
    Path   the folder holding main.go, go.mod and go.sum (hhe_gen/host/lattigo_peer in the
           repository, site-packages/hhe_gen/host/lattigo_peer in a wheel install)
    """
    return Path(str(importlib.resources.files("hhe_gen.host.lattigo_peer")))


def cache_dir() -> Path:
    """Where built peers live: ``$HHE_GEN_CACHE`` or ``~/.cache/hhe-gen``."""
    root = os.environ.get("HHE_GEN_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "hhe-gen"


def find_go() -> str | None:
    """Path of the ``go`` command: on PATH, else /usr/local/go/bin/go; None when neither exists."""
    found = shutil.which("go")
    if found:
        return found
    if _GO_FALLBACK.is_file() and os.access(_GO_FALLBACK, os.X_OK):
        return str(_GO_FALLBACK)
    return None


def _go_version(go: str) -> str:
    """The output of ``go version`` (e.g. ``go version go1.22.2 linux/amd64``)."""
    done = subprocess.run([go, "version"], capture_output=True, text=True, timeout=60,
                          env=_go_env())
    if done.returncode != 0:
        raise GoMissing(f"`{go} version` failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GOFLAGS"] = "-mod=mod"
    env.setdefault("GOTOOLCHAIN", "local")
    return env


@functools.lru_cache(maxsize=None)
def go_available() -> str | None:
    """Whether a usable Go toolchain exists.

    Returns
    -------
    None when Go >= 1.21 is found, else a one-line reason (for skip messages).
    """
    go = find_go()
    if go is None:
        return "Go is not installed (no `go` on PATH nor /usr/local/go/bin/go); " + \
            _INSTALL_HINT.format(*MIN_GO_VERSION)
    try:
        version = _go_version(go)
    except (GoMissing, OSError, subprocess.TimeoutExpired) as error:
        return f"Go at {go} does not run: {error}"
    match = re.search(r"go(\d+)\.(\d+)", version.split()[2] if len(version.split()) > 2 else "")
    if match and (int(match[1]), int(match[2])) < MIN_GO_VERSION:
        return f"{version} is too old; " + _INSTALL_HINT.format(*MIN_GO_VERSION)
    return None


def _json_default(value: Any) -> Any:
    """JSON for numpy scalars and arrays (exact for integers)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, complex):
        raise TypeError("complex numbers must be split into {'re', 'im'} (see slots_json)")
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


class LattigoPeer:
    """The Lattigo v6 peer program: built on first use, then called once per request.

    Parameters
    ----------
    go : str | None        the ``go`` command (default: :func:`find_go`)
    cache : Path | None    build cache (default: :func:`cache_dir`)
    source : Path | None   the peer's Go source (default: :func:`peer_source_dir`)
    timeout : float        seconds allowed for one call (the build has its own 15 minutes)

    Members
    -------
    binary : Path   the built program (building it if needed)
    build_seconds : float | None   how long this object's build took (None when cached)
    """

    def __init__(self, go: str | None = None, cache: Path | None = None,
                 source: Path | None = None, timeout: float = 600.0):
        reason = go_available() if go is None else None
        if reason is not None:
            raise GoMissing(reason)
        self.go = go or find_go()
        self.cache = Path(cache) if cache is not None else cache_dir()
        self.source = Path(source) if source is not None else peer_source_dir()
        self.timeout = timeout
        self.build_seconds: float | None = None
        self._binary: Path | None = None

    # -- building -------------------------------------------------------------------------

    def _source_files(self) -> list[Path]:
        files = sorted({path for pattern in _SOURCE_PATTERNS for path in self.source.glob(pattern)})
        if not any(path.name == "go.mod" for path in files):
            raise LattigoError("build", f"no go.mod in {self.source}", -1)
        return files

    def build_key(self) -> str:
        """Hash of the peer's sources and the Go version: the name of its cache entry."""
        digest = hashlib.sha256(_go_version(self.go).encode())
        for path in self._source_files():
            digest.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()[:20]

    @property
    def binary(self) -> Path:
        if self._binary is None:
            self._binary = self.build()
        return self._binary

    def build(self) -> Path:
        """Build the peer unless a build with the same key is cached.

        Returns
        -------
        Path of the executable. Concurrent builders (pytest-xdist workers) are serialised by a
        lock file; the executable appears atomically.
        """
        target = self.cache / f"lattigo-peer-{self.build_key()}" / "peer"
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with locked(target.parent / "build.lock"):
            if target.is_file():
                return target
            print(f"hhe-gen: building the Lattigo {LATTIGO_VERSION} peer with {self.go} "
                  "(first build downloads Go modules, about a minute)...", file=sys.stderr,
                  flush=True)
            start = time.monotonic()
            with tempfile.TemporaryDirectory(dir=target.parent) as work:
                for path in self._source_files():
                    shutil.copy2(path, Path(work) / path.name)
                built = Path(work) / "peer.new"
                done = subprocess.run([self.go, "build", "-o", str(built), "."], cwd=work,
                                      capture_output=True, text=True, env=_go_env(),
                                      timeout=900)
                if done.returncode != 0:
                    raise LattigoError("build", f"`go build` failed:\n{done.stdout}{done.stderr}",
                                       done.returncode)
                os.replace(built, target)
            self.build_seconds = time.monotonic() - start
        return target

    # -- calling --------------------------------------------------------------------------

    def call(self, op: str, request: dict | None = None) -> dict:
        """Run ``peer op`` on one request.

        Parameters
        ----------
        op : str        one of :data:`OPS`
        request : dict  the request JSON (integers stay exact; numpy values are accepted)

        Returns
        -------
        dict   the answer JSON

        Raises
        ------
        ParameterError   for an unknown op
        LattigoError     when the peer rejects the request (its stderr is in the message)
        """
        if op not in OPS:
            raise ParameterError("op", op, f"one of {', '.join(OPS)}")
        payload = json.dumps(request or {}, default=_json_default)
        try:
            done = subprocess.run([str(self.binary), op], input=payload, capture_output=True,
                                  text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired as error:
            raise LattigoError(op, f"no answer within {self.timeout} s", -1) from error
        if done.returncode != 0:
            raise LattigoError(op, done.stderr or "(no message)", done.returncode)
        try:
            return json.loads(done.stdout)
        except json.JSONDecodeError as error:
            raise LattigoError(op, f"answer is not JSON ({error}): {done.stdout[:200]!r}",
                               done.returncode) from error

    def version(self) -> dict:
        """``{"lattigo": "v6.x.y", "go": "go1.x.y"}`` of the built peer."""
        return self.call("version")

    # -- one thin method per operation ----------------------------------------------------

    def primes(self, log_n: int, q: Sequence[int]) -> dict:
        """``{"g": [..], "psi": [..]}``: Lattigo's primitive root and NTT root per prime."""
        return self.call("primes", {"LogN": log_n, "Q": list(q)})

    def ntt(self, log_n: int, q: Sequence[int], rows: Sequence[Sequence[int]]) -> list[list[int]]:
        """Lattigo's forward NTT of each row (row i modulo q[i]); bit-reversed output."""
        return self.call("ntt", {"LogN": log_n, "Q": list(q), "coeffs": rows})["ntt"]

    def intt(self, log_n: int, q: Sequence[int], rows: Sequence[Sequence[int]]) -> list[list[int]]:
        """Lattigo's inverse NTT of each row."""
        return self.call("intt", {"LogN": log_n, "Q": list(q), "ntt": rows})["coeffs"]

    def encode(self, params: dict, slots: dict, level: int | None = None,
               scale: float | int | None = None) -> list[list[int]]:
        """Lattigo's CKKS plaintext of ``slots`` in coefficient form, one row per prime."""
        return self.call("encode", _drop_none(params=params, slots=slots, level=level,
                                              scale=scale))["coeffs"]

    def decode(self, params: dict, rows: Sequence[Sequence[int]],
               scale: float | int | None = None) -> dict:
        """``{"re", "im"}``: all N/2 slots of a coefficient-form plaintext."""
        return self.call("decode", _drop_none(params=params, coeffs=rows, scale=scale))

    def decrypt(self, params: dict, sk: Sequence[int], ciphertext: dict) -> dict:
        """``{"re", "im", "coeffs"}``: Lattigo's decryption of ``ciphertext`` under ``sk``."""
        return self.call("decrypt", {"params": params, "sk": list(sk), "ciphertext": ciphertext})

    def encrypt(self, params: dict, slots: dict, *, sk: Sequence[int] | None = None,
                keys: dict | None = None, level: int | None = None,
                scale: float | int | None = None, seed: Any = None) -> dict:
        """A ciphertext (coefficient form) by Lattigo with ``sk`` or with ``keys``' pk."""
        return self.call("encrypt", _drop_none(params=params, slots=slots,
                                               sk=None if sk is None else list(sk), keys=keys,
                                               level=level, scale=scale, seed=seed))

    def keygen(self, params: dict, seed: Any = None) -> dict:
        """Keys JSON ``{"N", "Q", "sk", "pk0", "pk1"}`` made by Lattigo."""
        return self.call("keygen", _drop_none(params=params, seed=seed))

    def eval(self, params: dict, sk: Sequence[int], op: str, a: dict, b: dict,
             rescale: bool | None = None, rlk: dict | None = None) -> dict:
        """``a op b`` by Lattigo's evaluator (mul: MulRelin with ``rlk`` or a fresh key, then
        Rescale); coefficient form."""
        if op not in ("add", "sub", "mul"):
            raise ParameterError("op", op, "'add', 'sub' or 'mul'")
        return self.call("eval", _drop_none(params=params, sk=list(sk), op=op, a=a, b=b,
                                            rescale=rescale, rlk=rlk))

    def rlk(self, params: dict, sk: Sequence[int]) -> dict:
        """Lattigo's relinearisation key for ``sk`` (params need ``P``), in the interchange format."""
        return self.call("rlk", {"params": params, "sk": list(sk)})

    def tensor(self, params: dict, a: dict, b: dict) -> dict:
        """The degree-2 product of two ciphertexts (Lattigo's Mul without relinearisation)."""
        return self.call("tensor", {"params": params, "a": a, "b": b})

    def relinearize(self, params: dict, ciphertext: dict, rlk: dict) -> dict:
        """A degree-2 ciphertext relinearised by Lattigo with the given key."""
        return self.call("relinearize", {"params": params, "ciphertext": ciphertext, "rlk": rlk})

    def basis(self, log_n: int, q: Sequence[int], p: Sequence[int], step: str,
              rows: Sequence[Sequence[int]]) -> dict:
        """One of Lattigo's basis conversions ("mod_up", "mod_down", "decompose") on coefficient rows."""
        return self.call("basis", {"LogN": log_n, "Q": list(q), "P": list(p), "step": step,
                                   "rows": [list(r) for r in rows]})

    def rescale(self, params: dict, ciphertext: dict) -> dict:
        """A ciphertext divided (rounded) by its last prime, by Lattigo's Rescale."""
        return self.call("rescale", {"params": params, "ciphertext": ciphertext})


@functools.lru_cache(maxsize=None)
def default_peer() -> LattigoPeer:
    """One shared :class:`LattigoPeer` (raises :class:`GoMissing` without Go)."""
    return LattigoPeer()


def _drop_none(**fields: Any) -> dict:
    return {name: value for name, value in fields.items() if value is not None}


# -- interchange helpers (plain dicts, docs/interchange.md) --------------------------------

def params_json(log_n: int, q: Iterable[int], log_default_scale: int,
                p: Iterable[int] | None = None) -> dict:
    """``{"LogN", "Q", "LogDefaultScale", "P"?}``."""
    out = {"LogN": int(log_n), "Q": [int(x) for x in q], "LogDefaultScale": int(log_default_scale)}
    if p:
        out["P"] = [int(x) for x in p]
    return out


def slots_json(values: Iterable[complex]) -> dict:
    """``{"re": [..], "im": [..]}`` from complex (or real) slot values."""
    values = [complex(v) for v in values]
    return {"re": [v.real for v in values], "im": [v.imag for v in values]}


def slots_from_json(slots: dict) -> list[complex]:
    """Complex slot values from ``{"re", "im"}`` (a shorter list is padded with zeros)."""
    re_part, im_part = list(slots.get("re", [])), list(slots.get("im", []))
    count = max(len(re_part), len(im_part))
    re_part += [0.0] * (count - len(re_part))
    im_part += [0.0] * (count - len(im_part))
    return [complex(r, i) for r, i in zip(re_part, im_part)]


def ciphertext_json(c0: Sequence[Sequence[int]], c1: Sequence[Sequence[int]], scale: float | int,
                    form: str = "coeff") -> dict:
    """``{"scale", "form", "c0", "c1"}`` with rows converted to plain int lists."""
    if form not in ("coeff", "ntt"):
        raise ParameterError("form", form, "'coeff' or 'ntt'")
    if len(c0) != len(c1):
        raise ParameterError("c1", f"{len(c1)} rows", f"as many rows as c0 ({len(c0)})")
    return {"scale": scale, "form": form,
            "c0": [[int(x) for x in row] for row in c0],
            "c1": [[int(x) for x in row] for row in c1]}
