"""The butterfly model against direct formulas (Python integers / complex floats)."""

import random

import pytest

from hhe_gen.models.butterfly import FieldSpec, butterfly
from hhe_gen.models.fft import FixedPointFormat, dequantize_complex, quantize_complex
from hhe_gen.models.modarith import BarrettReducer, WordMontgomeryReducer
from hhe_gen.params import ParameterError, ntt_primes, rubato_params


def _fields():
    q = ntt_primes(1 << 13, 54, 1)[0]
    t = rubato_params("Par-128S").q
    return [("zq-barrett", FieldSpec("zq", BarrettReducer(q, 54)), q, 1),
            ("zq-montgomery", FieldSpec("zq", WordMontgomeryReducer(q, 54, 14)), q, pow(2, 56, q)),
            ("zt-barrett", FieldSpec("zt", BarrettReducer(t, 26)), t, 1)]


@pytest.mark.parametrize("name,field,q,radix", _fields(), ids=lambda x: x if isinstance(x, str) else "")
def test_modular_operations(name, field, q, radix):
    rng = random.Random(name)
    rinv = pow(radix, -1, q)
    for _ in range(200):
        a, b, w, c = (rng.randrange(q) for _ in range(4))
        bw = b * w * rinv % q
        assert butterfly("ct", field, a, b, w) == ((a + bw) % q, (a - bw) % q)
        assert butterfly("gs", field, a, b, w) == ((a + b) % q, (a - b) * w * rinv % q)
        assert butterfly("mul", field, a, b) == (a * b * rinv % q, None)
        assert butterfly("add", field, a, b) == ((a + b) % q, None)
        assert butterfly("sub", field, a, b) == ((a - b) % q, None)
        assert butterfly("mac", field, a, b, c=c) == ((c + a * b * rinv) % q, None)
        inv2 = pow(2, -1, q)
        assert butterfly("gsh", field, a, b, w) == ((a + b) * inv2 % q, (a - b) * w * rinv * inv2 % q)
    for a, b in ((0, 0), (q - 1, q - 1), (q - 1, 0), (0, q - 1), (1, 0), (q - 2, 1)):
        inv2 = pow(2, -1, q)
        assert butterfly("gsh", field, a, b, 1)[0] == (a + b) * inv2 % q


def test_halving_gs_stages_are_the_inverse_ntt():
    """log2 N stages of gsh (twiddles psi^-brv, the last psi^-brv(1) alone) give the INTT with
    N^-1 folded in, with no scaling pass."""
    from hhe_gen.models.ntt import intt, ntt_tables
    n, q = 64, ntt_primes(64, 30, 1)[0]
    field = FieldSpec("zq", BarrettReducer(q, 30))
    t = ntt_tables(n, q)
    rng = random.Random(5)
    a = [rng.randrange(q) for _ in range(n)]
    out, span, m = list(a), 1, n
    while m > 1:
        h = m // 2
        for i in range(h):
            for j in range(2 * i * span, 2 * i * span + span):
                out[j], out[j + span] = butterfly("gsh", field, out[j], out[j + span], t.psi_inv_brv[h + i])
        span, m = span * 2, h
    assert out == intt(a, q)


def test_complex_operations_track_floats():
    fmt = FixedPointFormat(29, 26)
    field = FieldSpec("complex", fmt=fmt)
    rng = random.Random(3)
    for _ in range(200):
        a, b, c = (complex(rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4)) for _ in range(3))
        w = complex(rng.uniform(-0.7, 0.7), rng.uniform(-0.7, 0.7))
        qa, qb, qc, qw = (quantize_complex(z, fmt) for z in (a, b, c, w))
        x, y = butterfly("ct", field, qa, qb, qw)
        assert abs(dequantize_complex(x, fmt) - (a + b * w)) < 2**-23
        assert abs(dequantize_complex(y, fmt) - (a - b * w)) < 2**-23
        x, y = butterfly("gs", field, qa, qb, qw)
        assert abs(dequantize_complex(x, fmt) - (a + b) / 2) < 2**-23
        assert abs(dequantize_complex(y, fmt) - (a - b) / 2 * w) < 2**-23
        (m, _), (s, _) = butterfly("mac", field, qa, qb, c=qc), butterfly("sub", field, qa, qb)
        assert abs(dequantize_complex(m, fmt) - (c + a * b)) < 2**-23
        assert dequantize_complex(s, fmt) == dequantize_complex(qa, fmt) - dequantize_complex(qb, fmt)


def test_bad_operations_are_named():
    field = _fields()[0][1]
    with pytest.raises(ParameterError, match="'op' = 'div'"):
        butterfly("div", field, 1, 2)
    with pytest.raises(ParameterError, match="'w'"):
        butterfly("ct", field, 1, 2)
    with pytest.raises(ParameterError, match="'a'"):
        butterfly("add", field, field.reducer.q, 2)
    with pytest.raises(ParameterError, match="'op' = 'gsh'.*complex"):
        butterfly("gsh", FieldSpec("complex", fmt=FixedPointFormat(29, 26)), (0, 0), (0, 0), (0, 0))
    with pytest.raises(ParameterError, match="'field' = 'gf2'"):
        FieldSpec("gf2")
