package main

// Lattigo's server-side CKKS evaluation, one step at a time: the tensor product of two
// ciphertexts (a degree-2 ciphertext), relinearisation of a degree-2 ciphertext with a given
// relinearisation key, and rescale by the last prime; and that key in the interchange format.
//
// The relinearisation key travels as {"levelQ", "levelP", "digits": [{"b": rows, "a": rows}]}:
// one digit per element of Lattigo's RNS gadget decomposition, rows over Q[0..levelQ] followed by
// P[0..levelP], coefficient form, plain residues in [0, q) (Lattigo keeps them in NTT and
// Montgomery form; import and export convert). b = -a*s + w_i*s^2 + e where w_i is the
// decomposition's gadget element (P times the CRT idempotent of the digit's primes).

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/ring"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// rlkJSON is a relinearisation key in the interchange format (see the file comment).
type rlkJSON struct {
	LevelQ int            `json:"levelQ"`
	LevelP int            `json:"levelP"`
	Digits []rlkDigitJSON `json:"digits"`
}

type rlkDigitJSON struct {
	B [][]uint64 `json:"b"`
	A [][]uint64 `json:"a"`
}

// qpModuli lists Q[0..levelQ] then P[0..levelP]: the rows of one key polynomial.
func qpModuli(params ckks.Parameters, levelQ, levelP int) []uint64 {
	return append(append([]uint64(nil), params.Q()[:levelQ+1]...), params.P()[:levelP+1]...)
}

// rlkToJSON exports Lattigo's relinearisation key.
func rlkToJSON(params ckks.Parameters, rlk *rlwe.RelinearizationKey) (rlkJSON, error) {
	if rlk.BaseTwoDecomposition != 0 {
		return rlkJSON{}, fmt.Errorf("the key has a base-2 decomposition (%d bits); only the RNS one is exported",
			rlk.BaseTwoDecomposition)
	}
	levelQ, levelP := rlk.LevelQ(), rlk.LevelP()
	ringQP := params.RingQP().AtLevel(levelQ, levelP)
	out := rlkJSON{LevelQ: levelQ, LevelP: levelP}
	for _, column := range rlk.Value {
		var rows [2][][]uint64
		for k := 0; k < 2; k++ {
			p := column[0][k].CopyNew()
			ringQP.IMForm(*p, *p)
			ringQP.INTT(*p, *p)
			rows[k] = append(rowsOf(p.Q, levelQ), rowsOf(p.P, levelP)...)
		}
		out.Digits = append(out.Digits, rlkDigitJSON{B: rows[0], A: rows[1]})
	}
	return out, nil
}

// rlkFromJSON imports a relinearisation key made for these parameters (all levels of Q and P).
func rlkFromJSON(params ckks.Parameters, k *rlkJSON) (*rlwe.RelinearizationKey, error) {
	if k == nil {
		return nil, fmt.Errorf("missing \"rlk\" (a relinearisation key, as the \"rlk\" operation exports it)")
	}
	rlk := rlwe.NewRelinearizationKey(params)
	levelQ, levelP := rlk.LevelQ(), rlk.LevelP()
	if k.LevelQ != levelQ || k.LevelP != levelP {
		return nil, fmt.Errorf("rlk: levelQ %d levelP %d, these parameters need %d and %d", k.LevelQ, k.LevelP,
			levelQ, levelP)
	}
	if len(k.Digits) != len(rlk.Value) {
		return nil, fmt.Errorf("rlk: %d digits, these parameters need %d", len(k.Digits), len(rlk.Value))
	}
	moduli := qpModuli(params, levelQ, levelP)
	ringQP := params.RingQP().AtLevel(levelQ, levelP)
	for i, digit := range k.Digits {
		for j, rows := range [][][]uint64{digit.B, digit.A} {
			name := fmt.Sprintf("rlk.digits[%d].%s", i, [2]string{"b", "a"}[j])
			if len(rows) != len(moduli) {
				return nil, fmt.Errorf("%s: %d rows, need %d (Q then P)", name, len(rows), len(moduli))
			}
			if err := checkRows(name, rows, moduli, params.N()); err != nil {
				return nil, err
			}
			p := rlk.Value[i][0][j]
			fillPoly(p.Q, rows[:levelQ+1])
			fillPoly(p.P, rows[levelQ+1:])
			ringQP.NTT(p, p)
			ringQP.MForm(p, p)
		}
	}
	return rlk, nil
}

// evaluationParams builds the parameters with their key-switching primes, which relinearisation needs.
func evaluationParams(p paramsJSON) (ckks.Parameters, error) {
	params, err := newParams(p, true)
	if err != nil {
		return params, err
	}
	if params.PCount() == 0 {
		return params, fmt.Errorf("key switching needs key-switching primes: give params.P")
	}
	return params, nil
}

// ciphertextRequest decodes a request with "params" and a "ciphertext"; withP requires the
// key-switching primes.
func ciphertextRequest(request []byte, withP bool) (ckks.Parameters, ckksRequest, *rlwe.Ciphertext, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return ckks.Parameters{}, req, nil, err
	}
	params, err := newParams(req.Params, true)
	if err == nil && withP {
		params, err = evaluationParams(req.Params)
	}
	if err != nil {
		return params, req, nil, err
	}
	if req.Ciphertext == nil {
		return params, req, nil, fmt.Errorf("missing \"ciphertext\"")
	}
	ct, err := ciphertextFromJSON(params, "ciphertext", *req.Ciphertext)
	return params, req, ct, err
}

// opRlk answers Lattigo's relinearisation key for sk (GenRelinearizationKeyNew).
func opRlk(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := evaluationParams(req.Params)
	if err != nil {
		return nil, err
	}
	sk, err := secretKeyFromSigned(params, req.SK)
	if err != nil {
		return nil, err
	}
	return rlkToJSON(params, ckks.NewKeyGenerator(params).GenRelinearizationKeyNew(sk))
}

// opTensor answers the degree-2 product of "a" and "b" (Lattigo's Mul without relinearisation).
func opTensor(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, true)
	if err != nil {
		return nil, err
	}
	a, b, err := operandsOf(params, req)
	if err != nil {
		return nil, err
	}
	if a.Degree() != 1 || b.Degree() != 1 {
		return nil, fmt.Errorf("the tensor product takes two degree-1 ciphertexts")
	}
	level := a.Level()
	if b.Level() < level {
		level = b.Level()
	}
	out := ckks.NewCiphertext(params, 2, level)
	if err := ckks.NewEvaluator(params, nil).Mul(a, b, out); err != nil {
		return nil, fmt.Errorf("Lattigo cannot multiply: %v", err)
	}
	return ciphertextToJSON(params, out)
}

// opRelinearize answers the relinearisation of a degree-2 "ciphertext" with the given "rlk".
func opRelinearize(request []byte) (interface{}, error) {
	params, req, ct, err := ciphertextRequest(request, true)
	if err != nil {
		return nil, err
	}
	if ct.Degree() != 2 {
		return nil, fmt.Errorf("ciphertext: relinearisation takes a degree-2 ciphertext (c0, c1, c2)")
	}
	rlk, err := rlkFromJSON(params, req.Rlk)
	if err != nil {
		return nil, err
	}
	out := ckks.NewCiphertext(params, 1, ct.Level())
	if err := ckks.NewEvaluator(params, rlwe.NewMemEvaluationKeySet(rlk)).Relinearize(ct, out); err != nil {
		return nil, fmt.Errorf("Lattigo cannot relinearise: %v", err)
	}
	return ciphertextToJSON(params, out)
}

// opRescale answers "ciphertext" divided (rounded) by its last prime, one level down.
func opRescale(request []byte) (interface{}, error) {
	params, _, ct, err := ciphertextRequest(request, false)
	if err != nil {
		return nil, err
	}
	if ct.Level() == 0 {
		return nil, fmt.Errorf("ciphertext: level 0 has no prime left to divide by")
	}
	out := ckks.NewCiphertext(params, ct.Degree(), ct.Level()-1)
	if err := ckks.NewEvaluator(params, nil).Rescale(ct, out); err != nil {
		return nil, fmt.Errorf("Lattigo cannot rescale: %v", err)
	}
	return ciphertextToJSON(params, out)
}

// basisRequest asks for one of Lattigo's RNS basis conversions on coefficient-form rows:
// "mod_up" (ModUpQtoP: rows over Q[0..L] -> rows over P), "mod_down" (ModDownQPtoQ: rows over
// Q[0..L] then P -> rows over Q[0..L]) or "decompose" (DecomposeAndSplit of rows over Q[0..L]
// -> one digit per gadget group, each rows over Q[0..L] then P; a digit's own primes carry the
// input rows, as Lattigo's DecomposeSingleNTT copies them).
type basisRequest struct {
	LogN *int       `json:"LogN"`
	Q    []uint64   `json:"Q"`
	P    []uint64   `json:"P"`
	Step string     `json:"step"`
	Rows [][]uint64 `json:"rows"`
}

// opBasis answers {"rows": ...} for mod_up and mod_down, {"digits": [...]} for decompose; every
// residue reduced to [0, q).
func opBasis(request []byte) (interface{}, error) {
	var req basisRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	ringQ, err := newRing(req.LogN, req.Q)
	if err != nil {
		return nil, err
	}
	if len(req.P) == 0 {
		return nil, fmt.Errorf("missing \"P\" (the key-switching primes)")
	}
	ringP, err := newRing(req.LogN, req.P)
	if err != nil {
		return nil, err
	}
	n, levelP := ringQ.N(), len(req.P)-1
	levelQ := len(req.Rows) - 1
	if req.Step == "mod_down" {
		levelQ -= len(req.P)
	}
	if levelQ < 0 || levelQ > ringQ.MaxLevel() {
		return nil, fmt.Errorf("rows: %d rows do not fit %q over Q (%d primes) and P (%d primes)", len(req.Rows),
			req.Step, len(req.Q), len(req.P))
	}
	moduli := append([]uint64(nil), req.Q[:levelQ+1]...)
	if req.Step == "mod_down" {
		moduli = append(moduli, req.P...)
	}
	if err := checkRows("rows", req.Rows, moduli, n); err != nil {
		return nil, err
	}
	rQ, rP := ringQ.AtLevel(levelQ), ringP.AtLevel(levelP)
	polQ, polP := rQ.NewPoly(), rP.NewPoly()
	fillPoly(polQ, req.Rows[:levelQ+1])
	switch req.Step {
	case "mod_up":
		ring.NewBasisExtender(ringQ, ringP).ModUpQtoP(levelQ, levelP, polQ, polP)
		rP.Reduce(polP, polP)
		return map[string][][]uint64{"rows": rowsOf(polP, levelP)}, nil
	case "mod_down":
		fillPoly(polP, req.Rows[levelQ+1:])
		out := rQ.NewPoly()
		ring.NewBasisExtender(ringQ, ringP).ModDownQPtoQ(levelQ, levelP, polQ, polP, out)
		rQ.Reduce(out, out)
		return map[string][][]uint64{"rows": rowsOf(out, levelQ)}, nil
	case "decompose":
		decomposer := ring.NewDecomposer(ringQ, ringP)
		nbPi := levelP + 1
		var digits [][][]uint64
		for g := 0; g*nbPi <= levelQ; g++ {
			dQ, dP := rQ.NewPoly(), rP.NewPoly()
			decomposer.DecomposeAndSplit(levelQ, levelP, nbPi, g, polQ, dQ, dP)
			for i := g * nbPi; i < (g+1)*nbPi && i <= levelQ; i++ {
				copy(dQ.Coeffs[i], polQ.Coeffs[i])
			}
			rQ.Reduce(dQ, dQ)
			rP.Reduce(dP, dP)
			digits = append(digits, append(rowsOf(dQ, levelQ), rowsOf(dP, levelP)...))
		}
		return map[string]interface{}{"digits": digits}, nil
	default:
		return nil, fmt.Errorf("step %q must be \"mod_up\", \"mod_down\" or \"decompose\"", req.Step)
	}
}
