"""One Python API for encrypting and decrypting through an hhe-gen accelerator, the same on every
backend: the ISA model, the RTL (Verilator), the simulated SoC and a board ([docs/soc.md](docs/soc.md)).

    from hhe_gen.client import Client
    with Client("toy", backend="soc-sim") as c:     # or "model", "rtl", Client(..., backend="board", ip=...)
        c.set_keys(keys)
        ct = c.encrypt(slots, seed=1)                  # CKKS public-key mode; mode="sk" for secret-key
        back = c.decrypt(ct)
"""

from .backends import BACKENDS, Backend, BackendRun
from .client import Client

__all__ = ["Client", "BACKENDS", "Backend", "BackendRun"]
