"""Validated, immutable parameter objects, prime search and named presets.

Every bad value raises :class:`ParameterError`, whose message names the parameter, the value and
what is allowed.
"""

from .errors import ParameterError
from .primes import (PRIME_FORMS, abc_fhe_primes, dna_hhe_mu_claim_holds, dna_hhe_primes,
                     is_prime, ntt_primes, primitive_root, root_of_unity)
from .ckks import CKKSParams, ErrorDistribution, RingParams, SecretDistribution
from .presets import DEFAULT_PRESET, PRESETS, preset, preset_names
from .rubato import RUBATO_SETS, RubatoParams, rubato_params

__all__ = [
    "ParameterError", "PRIME_FORMS", "abc_fhe_primes", "dna_hhe_mu_claim_holds", "dna_hhe_primes",
    "is_prime", "ntt_primes", "primitive_root", "root_of_unity",
    "CKKSParams", "ErrorDistribution", "RingParams", "SecretDistribution",
    "DEFAULT_PRESET", "PRESETS", "preset", "preset_names",
    "RUBATO_SETS", "RubatoParams", "rubato_params",
]
