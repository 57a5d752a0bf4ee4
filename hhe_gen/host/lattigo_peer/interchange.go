package main

// Conversions between hhe-gen's interchange JSON (DESIGN.md section 7) and Lattigo objects.
// Residues travel as plain integers in [0, q); Lattigo keeps keys in NTT and Montgomery form
// and ciphertexts in NTT form internally, so every import and export converts explicitly.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// paramsJSON is the parameter object: {"LogN", "Q", "P"?, "LogDefaultScale"}.
type paramsJSON struct {
	LogN            *int     `json:"LogN"`
	Q               []uint64 `json:"Q"`
	P               []uint64 `json:"P"`
	LogDefaultScale int      `json:"LogDefaultScale"`
}

// ciphertextJSON is a ciphertext: {"scale", "form": "coeff"|"ntt", "c0", "c1", "c2"?}; c2 makes it
// a degree-2 ciphertext (a tensor product before relinearisation).
type ciphertextJSON struct {
	Scale json.Number `json:"scale"`
	Form  string      `json:"form"`
	C0    [][]uint64  `json:"c0"`
	C1    [][]uint64  `json:"c1"`
	C2    [][]uint64  `json:"c2,omitempty"`
}

// keysJSON is a key pair: {"N", "Q", "sk": signed coefficients, "pk0", "pk1"} (pk over Q).
type keysJSON struct {
	N   int        `json:"N"`
	Q   []uint64   `json:"Q"`
	SK  []int64    `json:"sk"`
	PK0 [][]uint64 `json:"pk0"`
	PK1 [][]uint64 `json:"pk1"`
}

// slotsJSON holds slot values; fewer than N/2 entries means the rest are zero.
type slotsJSON struct {
	Re []float64 `json:"re"`
	Im []float64 `json:"im"`
}

const (
	minLogN = 3
	maxLogN = 17
)

func decodeRequest(request []byte, into interface{}) error {
	if err := json.Unmarshal(request, into); err != nil {
		return fmt.Errorf("bad request JSON: %v", err)
	}
	return nil
}

func checkLogN(logN *int) (int, error) {
	if logN == nil {
		return 0, fmt.Errorf("missing \"LogN\"")
	}
	if *logN < minLogN || *logN > maxLogN {
		return 0, fmt.Errorf("LogN = %d is outside %d..%d", *logN, minLogN, maxLogN)
	}
	return *logN, nil
}

// newRing builds Lattigo's ring Z_Q[X]/(X^N+1); Lattigo rejects moduli that are not prime or
// not 1 mod 2N.
func newRing(logN *int, moduli []uint64) (*ring.Ring, error) {
	n, err := checkLogN(logN)
	if err != nil {
		return nil, err
	}
	if len(moduli) == 0 {
		return nil, fmt.Errorf("missing \"Q\" (a non-empty list of primes)")
	}
	r, err := ring.NewRing(1<<n, moduli)
	if err != nil {
		return nil, fmt.Errorf("Lattigo rejects Q = %v at N = 2^%d: %v", moduli, n, err)
	}
	return r, nil
}

// newParams builds CKKS parameters; withP false drops the key-switching primes.
func newParams(p paramsJSON, withP bool) (ckks.Parameters, error) {
	if _, err := newRing(p.LogN, p.Q); err != nil {
		return ckks.Parameters{}, err
	}
	literal := ckks.ParametersLiteral{
		LogN:            *p.LogN,
		Q:               p.Q,
		LogDefaultScale: p.LogDefaultScale,
	}
	if withP && len(p.P) > 0 {
		literal.P = p.P
	}
	params, err := ckks.NewParametersFromLiteral(literal)
	if err != nil {
		return ckks.Parameters{}, fmt.Errorf("Lattigo rejects the parameters: %v", err)
	}
	return params, nil
}

// checkRows validates rows of residues against the first len(rows) moduli.
func checkRows(name string, rows [][]uint64, moduli []uint64, n int) error {
	if len(rows) == 0 {
		return fmt.Errorf("%s: no rows (need 1..%d rows, one per prime)", name, len(moduli))
	}
	if len(rows) > len(moduli) {
		return fmt.Errorf("%s: %d rows but only %d primes", name, len(rows), len(moduli))
	}
	for i, row := range rows {
		if len(row) != n {
			return fmt.Errorf("%s: row %d has %d coefficients, need N = %d", name, i, len(row), n)
		}
		for k, v := range row {
			if v >= moduli[i] {
				return fmt.Errorf("%s: row %d coefficient %d = %d is not below its prime %d", name, i, k, v, moduli[i])
			}
		}
	}
	return nil
}

// fillPoly copies validated rows into the first rows of a Lattigo polynomial.
func fillPoly(dst ring.Poly, rows [][]uint64) {
	for i, row := range rows {
		copy(dst.Coeffs[i], row)
	}
}

// rowsOf copies the first level+1 rows of a polynomial.
func rowsOf(p ring.Poly, level int) [][]uint64 {
	rows := make([][]uint64, level+1)
	for i := range rows {
		rows[i] = append([]uint64(nil), p.Coeffs[i]...)
	}
	return rows
}

// coeffRowsOf returns the coefficient-form rows of p, which is in NTT form when isNTT.
func coeffRowsOf(r *ring.Ring, p ring.Poly, level int, isNTT bool) [][]uint64 {
	if !isNTT {
		return rowsOf(p, level)
	}
	tmp := *p.CopyNew()
	r.AtLevel(level).INTT(tmp, tmp)
	return rowsOf(tmp, level)
}

// parseScale reads a scale; an absent scale means 2^LogDefaultScale.
func parseScale(number json.Number, params ckks.Parameters) (rlwe.Scale, error) {
	if number == "" {
		return params.DefaultScale(), nil
	}
	value, ok := new(big.Float).SetPrec(rlwe.ScalePrecision).SetString(string(number))
	if !ok || value.Sign() <= 0 {
		return rlwe.Scale{}, fmt.Errorf("scale %q is not a positive number", number)
	}
	return rlwe.NewScale(value), nil
}

// scaleNumber writes a scale as a JSON number: an exact integer when it is one, else float64.
func scaleNumber(s rlwe.Scale) json.Number {
	if s.Value.IsInt() {
		if i, accuracy := s.Value.Int(nil); accuracy == big.Exact {
			return json.Number(i.String())
		}
	}
	return json.Number(strconv.FormatFloat(s.Float64(), 'g', -1, 64))
}

// slotValues turns {"re", "im"} into complex slots (at most N/2; missing entries are 0).
func slotValues(s slotsJSON, maxSlots int) ([]complex128, error) {
	count := len(s.Re)
	if len(s.Im) > count {
		count = len(s.Im)
	}
	if count == 0 {
		return nil, fmt.Errorf("slots: \"re\" and \"im\" are both empty")
	}
	if count > maxSlots {
		return nil, fmt.Errorf("slots: %d values but only N/2 = %d slots", count, maxSlots)
	}
	values := make([]complex128, count)
	for j := range values {
		var re, im float64
		if j < len(s.Re) {
			re = s.Re[j]
		}
		if j < len(s.Im) {
			im = s.Im[j]
		}
		values[j] = complex(re, im)
	}
	return values, nil
}

func slotsOf(values []complex128) slotsJSON {
	out := slotsJSON{Re: make([]float64, len(values)), Im: make([]float64, len(values))}
	for j, v := range values {
		out.Re[j], out.Im[j] = real(v), imag(v)
	}
	return out
}

// secretKeyFromSigned imports signed coefficients as Lattigo's secret key: each coefficient
// reduced mod every prime of Q and P, then NTT, then Montgomery form (Lattigo's convention).
func secretKeyFromSigned(params ckks.Parameters, coeffs []int64) (*rlwe.SecretKey, error) {
	n := params.N()
	if len(coeffs) != n {
		return nil, fmt.Errorf("sk has %d coefficients, need N = %d", len(coeffs), n)
	}
	sk := rlwe.NewSecretKey(params)
	setSigned := func(r *ring.Ring, p ring.Poly) {
		if r == nil {
			return
		}
		for i, q := range r.ModuliChain() {
			for k, c := range coeffs {
				if c >= 0 {
					p.Coeffs[i][k] = uint64(c) % q
				} else {
					p.Coeffs[i][k] = q - uint64(-c)%q
					if p.Coeffs[i][k] == q {
						p.Coeffs[i][k] = 0
					}
				}
			}
		}
	}
	setSigned(params.RingQ(), sk.Value.Q)
	setSigned(params.RingP(), sk.Value.P)
	params.RingQP().NTT(sk.Value, sk.Value)
	params.RingQP().MForm(sk.Value, sk.Value)
	return sk, nil
}

// signedFromSecretKey exports Lattigo's secret key (NTT, Montgomery) as centred coefficients.
func signedFromSecretKey(params ckks.Parameters, sk *rlwe.SecretKey) []int64 {
	ringQ := params.RingQ()
	value := *sk.Value.Q.CopyNew()
	ringQ.IMForm(value, value)
	ringQ.INTT(value, value)
	q := ringQ.ModuliChain()[0]
	out := make([]int64, params.N())
	for k, v := range value.Coeffs[0] {
		if v > q/2 {
			out[k] = -int64(q - v)
		} else {
			out[k] = int64(v)
		}
	}
	return out
}

// publicKeyFromRows imports pk = (pk0, pk1) in coefficient form over all of Q.
func publicKeyFromRows(params ckks.Parameters, keys keysJSON) (*rlwe.PublicKey, error) {
	q := params.Q()
	if keys.N != 0 && keys.N != params.N() {
		return nil, fmt.Errorf("keys: N = %d but the parameters have N = %d", keys.N, params.N())
	}
	if len(keys.Q) != 0 && fmt.Sprint(keys.Q) != fmt.Sprint(q) {
		return nil, fmt.Errorf("keys: Q = %v differs from the parameters' Q = %v", keys.Q, q)
	}
	pk := rlwe.NewPublicKey(params)
	for i, rows := range [][][]uint64{keys.PK0, keys.PK1} {
		name := fmt.Sprintf("keys.pk%d", i)
		if len(rows) != len(q) {
			return nil, fmt.Errorf("%s: %d rows, need one per prime of Q (%d)", name, len(rows), len(q))
		}
		if err := checkRows(name, rows, q, params.N()); err != nil {
			return nil, err
		}
		fillPoly(pk.Value[i].Q, rows)
		params.RingQ().NTT(pk.Value[i].Q, pk.Value[i].Q)
		params.RingQ().MForm(pk.Value[i].Q, pk.Value[i].Q)
	}
	return pk, nil
}

// publicKeyRows exports Lattigo's public key (NTT, Montgomery) as coefficient rows over Q.
func publicKeyRows(params ckks.Parameters, pk *rlwe.PublicKey) (pk0, pk1 [][]uint64) {
	ringQ := params.RingQ()
	out := make([][][]uint64, 2)
	for i := range out {
		value := *pk.Value[i].Q.CopyNew()
		ringQ.IMForm(value, value)
		ringQ.INTT(value, value)
		out[i] = rowsOf(value, ringQ.Level())
	}
	return out[0], out[1]
}

// ciphertextFromJSON imports a degree-1 ciphertext (degree 2 with "c2") at level len(rows)-1,
// converted to the NTT form Lattigo's evaluator and decryptor work in.
func ciphertextFromJSON(params ckks.Parameters, name string, c ciphertextJSON) (*rlwe.Ciphertext, error) {
	if c.Form != "coeff" && c.Form != "ntt" {
		return nil, fmt.Errorf("%s: form %q must be \"coeff\" or \"ntt\"", name, c.Form)
	}
	components := [][][]uint64{c.C0, c.C1}
	if c.C2 != nil {
		components = append(components, c.C2)
	}
	for i, rows := range components {
		if len(rows) != len(c.C0) {
			return nil, fmt.Errorf("%s: c0 has %d rows but c%d has %d", name, len(c.C0), i, len(rows))
		}
		if err := checkRows(fmt.Sprintf("%s.c%d", name, i), rows, params.Q(), params.N()); err != nil {
			return nil, err
		}
	}
	scale, err := parseScale(c.Scale, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	level := len(c.C0) - 1
	ct := ckks.NewCiphertext(params, len(components)-1, level)
	ct.Scale = scale
	ct.IsNTT = true
	ringQ := params.RingQ().AtLevel(level)
	for i, rows := range components {
		fillPoly(ct.Value[i], rows)
		if c.Form == "coeff" {
			ringQ.NTT(ct.Value[i], ct.Value[i])
		}
	}
	return ct, nil
}

// ciphertextToJSON exports a degree-1 or degree-2 ciphertext in coefficient form.
func ciphertextToJSON(params ckks.Parameters, ct *rlwe.Ciphertext) (ciphertextJSON, error) {
	if ct.Degree() != 1 && ct.Degree() != 2 {
		return ciphertextJSON{}, fmt.Errorf("ciphertext has degree %d, only degrees 1 and 2 can be exported", ct.Degree())
	}
	level := ct.Level()
	out := ciphertextJSON{
		Scale: scaleNumber(ct.Scale),
		Form:  "coeff",
		C0:    coeffRowsOf(params.RingQ(), ct.Value[0], level, ct.IsNTT),
		C1:    coeffRowsOf(params.RingQ(), ct.Value[1], level, ct.IsNTT),
	}
	if ct.Degree() == 2 {
		out.C2 = coeffRowsOf(params.RingQ(), ct.Value[2], level, ct.IsNTT)
	}
	return out, nil
}
