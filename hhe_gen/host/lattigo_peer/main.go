// Command peer is hhe-gen's Lattigo v6 test peer.
//
// Usage: peer OP < request.json > answer.json
//
// It reads one JSON request on stdin, runs one Lattigo operation and writes one JSON answer
// on stdout. On bad input it exits with status 1 and a one-line message on stderr; an
// unexpected panic inside Lattigo exits with status 2. The JSON shapes follow hhe-gen's
// interchange format (DESIGN.md section 7): integers only, coefficient X^k at index k, one
// row per RNS prime. The operations are listed in the ops table below and documented in
// hhe_gen/lattigo.py.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// ops maps an operation name to the function that answers it. Each function receives the
// raw request and returns the answer object (marshalled to JSON) or an error.
var ops = map[string]func(request []byte) (interface{}, error){
	"version":     opVersion,
	"primes":      opPrimes,
	"ntt":         opNTT,
	"intt":        opINTT,
	"encode":      opEncode,
	"decode":      opDecode,
	"encrypt":     opEncrypt,
	"decrypt":     opDecrypt,
	"keygen":      opKeygen,
	"eval":        opEval,
	"rlk":         opRlk,
	"tensor":      opTensor,
	"relinearize": opRelinearize,
	"rescale":     opRescale,
	"basis":       opBasis,
}

func opNames() string {
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func fail(status int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "lattigo peer: "+format+"\n", args...)
	os.Exit(status)
}

func main() {
	if len(os.Args) != 2 {
		fail(1, "usage: peer OP < request.json (OP one of: %s)", opNames())
	}
	name := os.Args[1]
	op, known := ops[name]
	if !known {
		fail(1, "unknown operation %q (known: %s)", name, opNames())
	}
	request, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(1, "%s: cannot read stdin: %v", name, err)
	}
	if len(strings.TrimSpace(string(request))) == 0 {
		request = []byte("{}")
	}

	defer func() {
		if r := recover(); r != nil {
			fail(2, "%s: Lattigo panicked: %v", name, r)
		}
	}()
	answer, err := op(request)
	if err != nil {
		fail(1, "%s: %v", name, err)
	}
	out, err := json.Marshal(answer)
	if err != nil {
		fail(1, "%s: cannot encode the answer: %v", name, err)
	}
	os.Stdout.Write(out)
	os.Stdout.Write([]byte("\n"))
}
