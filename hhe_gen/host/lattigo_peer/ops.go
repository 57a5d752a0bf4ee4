package main

// One function per peer operation. Each decodes its own request shape (see hhe_gen/lattigo.py
// for the documented JSON API) and returns the answer object.

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/ring/ringqp"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

const lattigoModule = "github.com/tuneinsight/lattigo/v6"

// opVersion answers {"lattigo": module version, "go": toolchain version}.
func opVersion(request []byte) (interface{}, error) {
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == lattigoModule {
				version = dep.Version
			}
		}
	}
	return map[string]string{"lattigo": version, "go": runtime.Version()}, nil
}

type ringRequest struct {
	LogN   *int       `json:"LogN"`
	Q      []uint64   `json:"Q"`
	Coeffs [][]uint64 `json:"coeffs"`
	NTT    [][]uint64 `json:"ntt"`
}

// opPrimes answers {"g": primitive root per prime, "psi": the 2N-th root the NTT uses}.
// psi is read back from Lattigo's own twiddle table (RootsForward holds psi^j in Montgomery
// form at index bit-reverse(j, log2 N)), so it is the root the NTT really uses.
func opPrimes(request []byte) (interface{}, error) {
	var req ringRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	r, err := newRing(req.LogN, req.Q)
	if err != nil {
		return nil, err
	}
	g := make([]uint64, len(r.SubRings))
	psi := make([]uint64, len(r.SubRings))
	for i, s := range r.SubRings {
		g[i] = s.PrimitiveRoot
		psi[i] = ring.IMForm(s.RootsForward[r.N()/2], s.Modulus, s.MRedConstant)
	}
	return map[string][]uint64{"g": g, "psi": psi}, nil
}

// opNTT answers {"ntt": rows}: Lattigo's forward NTT of each row with its prime
// (plain residues in and out; Lattigo's Montgomery twiddles cancel inside).
func opNTT(request []byte) (interface{}, error) { return transform(request, false) }

// opINTT answers {"coeffs": rows}: Lattigo's inverse NTT of each row.
func opINTT(request []byte) (interface{}, error) { return transform(request, true) }

// transform runs Lattigo's forward (inverse=false) or inverse NTT on every row.
func transform(request []byte, inverse bool) (interface{}, error) {
	var req ringRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	r, err := newRing(req.LogN, req.Q)
	if err != nil {
		return nil, err
	}
	in, inName, outName := req.Coeffs, "coeffs", "ntt"
	if inverse {
		in, inName, outName = req.NTT, "ntt", "coeffs"
	}
	if err := checkRows(inName, in, req.Q, r.N()); err != nil {
		return nil, err
	}
	level := len(in) - 1
	p := ring.NewPoly(r.N(), level)
	fillPoly(p, in)
	if inverse {
		r.AtLevel(level).INTT(p, p)
	} else {
		r.AtLevel(level).NTT(p, p)
	}
	return map[string][][]uint64{outName: rowsOf(p, level)}, nil
}

type ckksRequest struct {
	Params     paramsJSON      `json:"params"`
	Slots      *slotsJSON      `json:"slots"`
	Level      *int            `json:"level"`
	Scale      json.Number     `json:"scale"`
	Coeffs     [][]uint64      `json:"coeffs"`
	SK         []int64         `json:"sk"`
	Keys       *keysJSON       `json:"keys"`
	Seed       json.RawMessage `json:"seed"`
	Ciphertext *ciphertextJSON `json:"ciphertext"`
	Op         string          `json:"op"`
	A          *ciphertextJSON `json:"a"`
	B          *ciphertextJSON `json:"b"`
	Rescale    *bool           `json:"rescale"`
	Rlk        *rlkJSON        `json:"rlk"`
}

// encodePlaintext encodes the request's slots at its level and scale, in NTT form when ntt.
func encodePlaintext(params ckks.Parameters, req ckksRequest, ntt bool) (*rlwe.Plaintext, error) {
	if req.Slots == nil {
		return nil, fmt.Errorf("missing \"slots\"")
	}
	values, err := slotValues(*req.Slots, params.MaxSlots())
	if err != nil {
		return nil, err
	}
	level := params.MaxLevel()
	if req.Level != nil {
		if *req.Level < 0 || *req.Level > params.MaxLevel() {
			return nil, fmt.Errorf("level %d is outside 0..%d", *req.Level, params.MaxLevel())
		}
		level = *req.Level
	}
	scale, err := parseScale(req.Scale, params)
	if err != nil {
		return nil, err
	}
	pt := ckks.NewPlaintext(params, level)
	pt.Scale = scale
	pt.IsNTT = ntt
	if err := ckks.NewEncoder(params).Encode(values, pt); err != nil {
		return nil, fmt.Errorf("Lattigo cannot encode: %v", err)
	}
	return pt, nil
}

// decodePlaintext decodes all N/2 slots of a plaintext.
func decodePlaintext(params ckks.Parameters, pt *rlwe.Plaintext) (slotsJSON, error) {
	values := make([]complex128, params.MaxSlots())
	if err := ckks.NewEncoder(params).Decode(pt, values); err != nil {
		return slotsJSON{}, fmt.Errorf("Lattigo cannot decode: %v", err)
	}
	return slotsOf(values), nil
}

// keyedPRNG returns Lattigo's keyed PRNG keyed by the seed's JSON text, or nil without seed.
func keyedPRNG(seed json.RawMessage) (sampling.PRNG, error) {
	if len(seed) == 0 || string(seed) == "null" {
		return nil, nil
	}
	prng, err := sampling.NewKeyedPRNG(seed)
	if err != nil {
		return nil, fmt.Errorf("seed: %v", err)
	}
	return prng, nil
}

// opEncode answers {"coeffs": rows}: Lattigo's CKKS plaintext in coefficient form.
func opEncode(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, false)
	if err != nil {
		return nil, err
	}
	pt, err := encodePlaintext(params, req, false)
	if err != nil {
		return nil, err
	}
	return map[string][][]uint64{"coeffs": rowsOf(pt.Value, pt.Level())}, nil
}

// opDecode answers {"re", "im"} for a coefficient-form plaintext at the given scale.
func opDecode(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, false)
	if err != nil {
		return nil, err
	}
	if err := checkRows("coeffs", req.Coeffs, params.Q(), params.N()); err != nil {
		return nil, err
	}
	scale, err := parseScale(req.Scale, params)
	if err != nil {
		return nil, err
	}
	pt := ckks.NewPlaintext(params, len(req.Coeffs)-1)
	pt.Scale = scale
	pt.IsNTT = false
	fillPoly(pt.Value, req.Coeffs)
	return decodePlaintext(params, pt)
}

// opDecrypt answers {"re", "im", "coeffs"}: Lattigo's decryption with the imported sk.
func opDecrypt(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, true)
	if err != nil {
		return nil, err
	}
	sk, err := secretKeyFromSigned(params, req.SK)
	if err != nil {
		return nil, err
	}
	if req.Ciphertext == nil {
		return nil, fmt.Errorf("missing \"ciphertext\"")
	}
	ct, err := ciphertextFromJSON(params, "ciphertext", *req.Ciphertext)
	if err != nil {
		return nil, err
	}
	pt := ckks.NewPlaintext(params, ct.Level())
	ckks.NewDecryptor(params, sk).Decrypt(ct, pt)
	slots, err := decodePlaintext(params, pt)
	if err != nil {
		return nil, err
	}
	return map[string]interface{}{
		"re":     slots.Re,
		"im":     slots.Im,
		"coeffs": coeffRowsOf(params.RingQ(), pt.Value, pt.Level(), pt.IsNTT),
	}, nil
}

// opEncrypt answers a coefficient-form ciphertext made by Lattigo's encryptor with either the
// given secret key ("sk") or the given public key ("keys"). A seed keys the PRNG of the
// uniform part a (secret-key mode); Lattigo's noise samplers always use fresh randomness.
func opEncrypt(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, false)
	if err != nil {
		return nil, err
	}
	var key rlwe.EncryptionKey
	switch {
	case req.SK != nil && req.Keys != nil:
		return nil, fmt.Errorf("give either \"sk\" or \"keys\", not both")
	case req.SK != nil:
		if key, err = secretKeyFromSigned(params, req.SK); err != nil {
			return nil, err
		}
	case req.Keys != nil:
		if key, err = publicKeyFromRows(params, *req.Keys); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("missing \"sk\" (secret-key encryption) or \"keys\" (public-key encryption)")
	}
	pt, err := encodePlaintext(params, req, true)
	if err != nil {
		return nil, err
	}
	enc := ckks.NewEncryptor(params, key)
	prng, err := keyedPRNG(req.Seed)
	if err != nil {
		return nil, err
	}
	if prng != nil {
		enc = enc.WithPRNG(prng)
	}
	ct := ckks.NewCiphertext(params, 1, pt.Level())
	if err := enc.Encrypt(pt, ct); err != nil {
		return nil, fmt.Errorf("Lattigo cannot encrypt: %v", err)
	}
	return ciphertextToJSON(params, ct)
}

// opKeygen answers keys JSON made by Lattigo over Q. Without a seed it is Lattigo's
// GenKeyPairNew; with a seed, sk is drawn by Lattigo's ternary sampler and a by the uniform
// sampler from a keyed PRNG (the Gaussian error stays fresh).
func opKeygen(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, false)
	if err != nil {
		return nil, err
	}
	prng, err := keyedPRNG(req.Seed)
	if err != nil {
		return nil, err
	}
	var sk *rlwe.SecretKey
	var pk *rlwe.PublicKey
	if prng == nil {
		sk, pk = ckks.NewKeyGenerator(params).GenKeyPairNew()
	} else {
		sampler, err := ring.NewSampler(prng, params.RingQ(), params.Xs(), false)
		if err != nil {
			return nil, fmt.Errorf("Lattigo cannot sample the secret: %v", err)
		}
		s := sampler.ReadNew()
		q0 := params.Q()[0]
		signed := make([]int64, params.N())
		for k, v := range s.Coeffs[0] {
			if v > q0/2 {
				signed[k] = -int64(q0 - v)
			} else {
				signed[k] = int64(v)
			}
		}
		if sk, err = secretKeyFromSigned(params, signed); err != nil {
			return nil, err
		}
		pk = rlwe.NewPublicKey(params)
		zero := rlwe.Element[ringqp.Poly]{
			MetaData: &rlwe.MetaData{CiphertextMetaData: rlwe.CiphertextMetaData{IsNTT: true, IsMontgomery: true}},
			Value:    []ringqp.Poly(pk.Value),
		}
		if err := ckks.NewEncryptor(params, sk).WithPRNG(prng).EncryptZero(zero); err != nil {
			return nil, fmt.Errorf("Lattigo cannot make the public key: %v", err)
		}
	}
	pk0, pk1 := publicKeyRows(params, pk)
	return keysJSON{N: params.N(), Q: params.Q(), SK: signedFromSecretKey(params, sk), PK0: pk0, PK1: pk1}, nil
}

// operandsOf imports the request's ciphertexts "a" and "b".
func operandsOf(params ckks.Parameters, req ckksRequest) (a, b *rlwe.Ciphertext, err error) {
	if req.A == nil || req.B == nil {
		return nil, nil, fmt.Errorf("missing ciphertext \"a\" or \"b\"")
	}
	if a, err = ciphertextFromJSON(params, "a", *req.A); err != nil {
		return nil, nil, err
	}
	b, err = ciphertextFromJSON(params, "b", *req.B)
	return a, b, err
}

// opEval answers the coefficient-form result of a+b, a-b or a*b (MulRelin with the given "rlk"
// or, without one, a relinearisation key Lattigo makes from sk; then Rescale unless
// "rescale": false).
func opEval(request []byte) (interface{}, error) {
	var req ckksRequest
	if err := decodeRequest(request, &req); err != nil {
		return nil, err
	}
	params, err := newParams(req.Params, true)
	if err != nil {
		return nil, err
	}
	sk, err := secretKeyFromSigned(params, req.SK)
	if err != nil {
		return nil, err
	}
	a, b, err := operandsOf(params, req)
	if err != nil {
		return nil, err
	}
	rescale := req.Op == "mul"
	if req.Rescale != nil {
		rescale = *req.Rescale
	}
	var result *rlwe.Ciphertext
	switch req.Op {
	case "add":
		result, err = ckks.NewEvaluator(params, nil).AddNew(a, b)
	case "sub":
		result, err = ckks.NewEvaluator(params, nil).SubNew(a, b)
	case "mul":
		if params.PCount() == 0 {
			return nil, fmt.Errorf("op \"mul\" needs key-switching primes: give params.P")
		}
		var rlk *rlwe.RelinearizationKey
		if req.Rlk == nil {
			rlk = ckks.NewKeyGenerator(params).GenRelinearizationKeyNew(sk)
		} else if rlk, err = rlkFromJSON(params, req.Rlk); err != nil {
			return nil, err
		}
		result, err = ckks.NewEvaluator(params, rlwe.NewMemEvaluationKeySet(rlk)).MulRelinNew(a, b)
	default:
		return nil, fmt.Errorf("op %q must be \"add\", \"sub\" or \"mul\"", req.Op)
	}
	if err != nil {
		return nil, fmt.Errorf("Lattigo cannot %s: %v", req.Op, err)
	}
	if rescale {
		if err := ckks.NewEvaluator(params, nil).Rescale(result, result); err != nil {
			return nil, fmt.Errorf("Lattigo cannot rescale: %v", err)
		}
	}
	return ciphertextToJSON(params, result)
}
