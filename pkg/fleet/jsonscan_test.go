package fleet

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanStructure: scanStructure tells valid JSON as json.Valid does; on a
// valid JSON object it finds the members and instances elements json.Decoder
// finds, and reports a repeated key whenever the exact walk
// (checkDuplicateKeys) finds one.
func FuzzScanStructure(f *testing.F) {
	f.Add([]byte(validDoc))
	f.Add([]byte(`{"instances": [{"a": {"b": [1, {"c": 2, "c": 3}]}}], "k": "v"}`))
	f.Add([]byte(`{"a\u0062": 1, "ab": 2, "instances": "x"}`))
	f.Add([]byte(` { "instances" : [ ] , "x" : [ [ { } ] , "\"]" ] } `))
	f.Add([]byte(`{"instances": [null, true, -1.5e3, "s\\", [], {}], "instances": []}`))
	f.Add([]byte("{\"a\xb0\": 1, \"a\xb1\": 2, \"instances\": []}")) // both keys decode to "a\uFFFD"
	f.Add([]byte(`{"a": 01}`))
	f.Add([]byte(`{"a": [1, 2,]}`))
	f.Add([]byte(`{"a": "\x"} `))
	f.Add([]byte(`{"a": -}`))
	f.Add([]byte(`{"a": 1.e5, "b": tru}`))
	f.Add([]byte("{\"a\": \"\t\"}"))
	f.Add([]byte(`{"a": {"b": 1} "c": 2}`))
	f.Add([]byte(`{"instances": [{}, {}}`))
	f.Add([]byte(`{"a": "\u12G4"}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, j []byte) {
		if t := bytes.TrimLeft(j, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return
		}
		st, ok := scanStructure(j)
		if valid := json.Valid(j); ok != valid {
			t.Fatalf("scanStructure says valid %v, json.Valid %v, of %q", ok, valid, j)
		}
		if !ok {
			return
		}
		if dupErr := checkDuplicateKeys(j); dupErr != nil && !st.dup {
			t.Fatalf("checkDuplicateKeys: %v; scanStructure found no repeated key in %q", dupErr, j)
		} else if dupErr == nil && st.dup && !bytes.Contains(j, []byte(`\`)) && utf8.Valid(j) {
			t.Fatalf("scanStructure found a repeated key the exact walk does not, in %q", j)
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.Token()
		var keys []string
		var vals []json.RawMessage
		for dec.More() {
			kt, _ := dec.Token()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			keys, vals = append(keys, kt.(string)), append(vals, raw)
		}
		if len(st.members) != len(keys) {
			t.Fatalf("%d members, want %d, in %q", len(st.members), len(keys), j)
		}
		for i, m := range st.members {
			if plain := !bytes.Contains([]byte(m.key), []byte(`\`)) && utf8.ValidString(m.key); plain && m.key != keys[i] {
				t.Fatalf("member %d is %q, want %q", i, m.key, keys[i])
			}
			if got := j[m.start:m.end]; !bytes.Equal(got, vals[i]) {
				t.Fatalf("member %q is %q, want %q", keys[i], got, vals[i])
			}
		}
		for i, m := range st.members {
			if m.key != "instances" || vals[i][0] != '[' {
				continue
			}
			var elems []json.RawMessage
			if err := json.Unmarshal(vals[i], &elems); err != nil {
				t.Fatal(err)
			}
			if len(elems) != len(st.elements) {
				t.Fatalf("%d elements, want %d, in %q", len(st.elements), len(elems), j)
			}
			for k, e := range st.elements {
				var a, b any
				json.Unmarshal(j[e[0]:e[1]], &a)
				json.Unmarshal(elems[k], &b)
				if ab, bb := mustJSON(a), mustJSON(b); ab != bb {
					t.Fatalf("element %d is %s, want %s", k, ab, bb)
				}
			}
			break
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestScanStructureValidity mutates valid documents a few bytes at a time and
// requires scanStructure to tell valid from invalid as json.Valid does.
func TestScanStructureValidity(t *testing.T) {
	docs := []string{validDoc,
		`{"instances": [{"id": "a", "n": -0.5e+3, "t": true, "f": false, "z": null, "s": "\u00e9\n\"x\""}], "k": [[], {}]}`}
	alphabet := []byte("{}[]\",:.-+eE0123456789tfnulrs\\ \t\n\x01\x1f\xff/bu")
	rng := rand.New(rand.NewPCG(7, 11))
	for n := 0; n < 20000; n++ {
		j := []byte(docs[rng.IntN(len(docs))])
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(j))
			switch c := alphabet[rng.IntN(len(alphabet))]; rng.IntN(3) {
			case 0:
				j[at] = c
			case 1:
				j = append(j[:at], j[at+1:]...)
			default:
				j = append(j[:at], append([]byte{c}, j[at:]...)...)
			}
		}
		if t0 := bytes.TrimLeft(j, " \t\r\n"); len(t0) == 0 || t0[0] != '{' {
			continue
		}
		if _, ok := scanStructure(j); ok != json.Valid(j) {
			t.Fatalf("scanStructure says valid %v, json.Valid %v, of %q", ok, !ok, j)
		}
	}
}

// TestScanStructureNesting: encoding/json's nesting limit holds.
func TestScanStructureNesting(t *testing.T) {
	for _, depth := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		j := []byte(`{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "}")
		if _, ok := scanStructure(j); ok != json.Valid(j) {
			t.Errorf("depth %d: scanStructure says valid %v, json.Valid %v", depth, ok, !ok)
		}
	}
}

// TestSkipSpace: skipSpace stops where a byte-at-a-time skip of JSON's four
// whitespace bytes stops, over random runs of spaces (short and past eight),
// tabs, newlines and other bytes, from every offset.
func TestSkipSpace(t *testing.T) {
	naive := func(b []byte, i int) int {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		return i
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		var b []byte
		for range r.IntN(12) {
			switch r.IntN(6) {
			case 0, 1:
				b = append(b, bytes.Repeat([]byte{' '}, r.IntN(20))...)
			case 2:
				b = append(b, '\t')
			case 3:
				b = append(b, '\n', '\r')
			case 4:
				b = append(b, "\u00a0"...) // not JSON whitespace
			default:
				b = append(b, byte(r.IntN(256)))
			}
		}
		for i := 0; i <= len(b); i++ {
			if got, want := skipSpace(b, i), naive(b, i); got != want {
				t.Fatalf("skipSpace(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}
