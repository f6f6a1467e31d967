package fleet

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// asciiInstance is randomInstance with its strings made plain ASCII (no
// escapes), as most fleets are: the YAML Encoder writes it in the subset
// the fast converter reads.
func asciiInstance(r *rand.Rand) Instance {
	in := randomInstance(r)
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	var out strings.Builder
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			inString = !inString
		case inString && c == '\\':
			i++ // drop an escape and what it escapes
			if i < len(b) && b[i] == 'u' {
				i += 4
			}
			continue
		case inString && (c >= 0x80 || c < 0x20 || c == 0x7f || c == '#'):
			continue
		}
		out.WriteByte(c)
	}
	var clean Instance
	if err := json.Unmarshal([]byte(out.String()), &clean); err != nil {
		panic(err)
	}
	return clean
}

// randomYAMLFleet is randomFleet, its instances' strings plain ASCII
// when ascii is set.
func randomYAMLFleet(r *rand.Rand, n int, ascii bool) *Fleet {
	f := randomFleet(r, n)
	if ascii {
		for i := range f.Instances {
			f.Instances[i] = asciiInstance(r)
		}
	}
	return f
}

// explicitKey finds an explicit mapping key ("? "), which the Encoder
// writes for a key with a line break, and the fast converter leaves to the
// YAML library.
var explicitKey = regexp.MustCompile(`(?m)^ *\? `)

// TestYAMLStreamMatchesTree: fleets the YAML Encoder writes (random values
// of every field) read streamed as they read whole: the same fleet or the
// same error (most random instances do not validate). Every instance is
// converted without the YAML library, but for keys with line breaks.
func TestYAMLStreamMatchesTree(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 5))
	for i := range 300 {
		ascii := i%2 == 0
		f := randomYAMLFleet(r, r.IntN(4), ascii)
		b, err := Marshal(f, FormatYAML)
		if err != nil {
			continue // a string YAML cannot hold
		}
		sameResult(t, "fleet.yaml", b)
		conv := &yamlConverter{}
		// An empty list is written inline ("instances: []"), which the
		// whole-tree reader reads.
		if _, _, ok := streamYAMLWith(b, conv); !ok && len(f.Instances) > 0 {
			t.Fatalf("not streamed:\n%s", b)
		}
		if conv.slow > 0 && (ascii || !explicitKey.Match(b)) {
			t.Fatalf("%d of %d instances took the YAML library:\n%s", conv.slow, len(f.Instances), b)
		}
	}
}

// TestYAMLStreamGolden: the full example, with Unix and with Windows line
// ends, reads streamed, every instance on the fast path, as it reads whole.
func TestYAMLStreamGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/full.yaml.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range [][]byte{b, bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))} {
		sameResult(t, "full.yaml", d)
		conv := &yamlConverter{}
		f, err, ok := streamYAMLWith(d, conv)
		if !ok || err != nil || len(f.Instances) == 0 {
			t.Fatalf("not streamed: ok %v, err %v", ok, err)
		}
		if conv.slow > 0 {
			t.Fatalf("%d instances took the YAML library", conv.slow)
		}
	}
}

// validYAML is a small fleet in the layouts people write by hand.
const validYAML = `apiVersion: gpufinops/v1
kind: Fleet
metadata:
  name: hand
instances:
- id: a
  provider: aws
  region: us-east-1
  instanceType: g5.xlarge
  tags:
    team: ml
    'it''s': "x y"
  utilization:
    samples:
    - {time: "2026-11-29T00:00:00Z", gpu: [1, 2.50]}
    - time: '2026-11-29T01:00:00Z'
      gpu: 3
- id: b
  provider: gcp
  region: us-central1
  instanceType: a2-highgpu-1g
  hourlyPrice: 3.10
  usage:
    schedule: {timezone: Asia/Kolkata, windows: [{days: [sat], start: "23:29", end: "24:00"}]}
`

// TestYAMLStreamEdits: a valid fleet and every small edit of it (a line
// removed, doubled, indented or outdented, a YAML feature the split leaves
// to the library put in) read streamed as they read whole: the same fleet,
// or the same error.
func TestYAMLStreamEdits(t *testing.T) {
	docs := []string{validYAML, oneYAML}
	b, err := os.ReadFile("testdata/full.yaml.golden")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, string(b))
	for _, d := range docs[:3] { // the same with Windows line ends
		docs = append(docs, strings.ReplaceAll(d, "\n", "\r\n"))
	}
	for _, d := range docs {
		sameResult(t, "fleet.yaml", []byte(d))
		for _, e := range yamlEdits(d) {
			sameResult(t, "fleet.yaml", []byte(e))
		}
	}
	for _, d := range []string{
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- &a {id: a}\n- *a\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\nx: &p aws\ninstances:\n- {id: a, provider: *p}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\ninstances:\n- id: b\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\n\"instances\": []\ninstances:\n- id: b\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  name: \"x\n- id: b\"\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\nmetadata: {name: \"x\ninstances:\n- id: a\nkind: y\"}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\nmetadata: {name: x,\ninstances:\n  - id: a\nz: 1}\n",
		"{apiVersion: gpufinops/v1, kind: Fleet,\ninstances:\n- id: a\n}\n",
		"---\napiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n",
		"%YAML 1.1\n---\napiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  gpu: {count: .nan}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  vcpus: 1e400\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  vcpus: 0x10\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  vcpus: 1_0\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  hibernation: yes\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  hibernation: True\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  account: 0123\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  account: 123\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  tags: {on: x}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  tags: {a: x, a: y}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n-\n  id: a\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n-\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- 1\n- [a]\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n - id: b\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n  x: 1\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    name: b\n     c\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\nmetadata:\n  name: x\n",
		"apiVersion: gpufinops/v2\nkind: Fleet\ninstances:\n  - id: a\n  - id: [\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\nbogus: 1\ninstances:\n  - id: a\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    bogus: 1\n  - id: b\n    gpu: {count: \"8\"\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    bogus: 1\n  - id: b\n    gpu: {count: \"8\"}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\r\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n\t- id: a\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances: # the fleet\n  # first\n  - id: a # the id\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    tags:\n      k:\n      \"x:y\": \"1\"\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    utilization:\n      samples:\n      - time: \"2026-11-29T00:00:00Z\"\n        gpu:\n        - 1\n        - -0.0\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    notes: |\n      x\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: é\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - !!map {id: a}\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - ? id\n    : a\n",
	} {
		sameResult(t, "fleet.yaml", []byte(d))
	}
}

// yamlEdits are small edits of a YAML document, one each.
func yamlEdits(d string) []string {
	lines := strings.SplitAfter(d, "\n")
	join := func(ls []string) string { return strings.Join(ls, "") }
	var out []string
	inserts := []string{"&a ", "*a ", "!!str ", "# c ", "? ", "| ", "\t", "- ", "{", "[", "\"", "'", "yes ", "0x1F ", ".5 ", "-0 ", "1e400 ", "~ ", ": ", "\r", "\r\n"}
	for i, l := range lines {
		edit := func(nl string) {
			ls := append([]string{}, lines...)
			ls[i] = nl
			out = append(out, join(ls))
		}
		edit("")                         // removed
		edit(l + l)                      // doubled
		edit(" " + l)                    // indented
		edit("  " + l)                   // indented more
		edit(strings.TrimPrefix(l, " ")) // outdented
		edit(strings.TrimLeft(l, " "))   // to column 0
		if k := strings.Index(l, ": "); k >= 0 {
			for _, ins := range inserts {
				edit(l[:k+2] + ins + l[k+2:])
			}
			edit(l[:k] + l[k+1:]) // the colon removed
		}
		if k := strings.Index(l, "- "); k >= 0 {
			edit(l[:k] + "-" + l[k+2:])
			edit(l[:k] + "- - " + l[k+2:])
		}
		if i+1 < len(lines) {
			ls := append([]string{}, lines...)
			ls[i], ls[i+1] = ls[i+1], ls[i]
			out = append(out, join(ls))
		}
	}
	return out
}

// checkYAMLItem is the fast converter's contract on one element: when it
// converts text, the YAML library converts it to the same JSON value.
func checkYAMLItem(t *testing.T, text []byte, indent int) (fast bool) {
	t.Helper()
	var y yamlItem
	j, ok := y.convert(text, indent)
	if !ok {
		return false
	}
	lib, err := yaml.YAMLToJSONStrict(text)
	if err != nil {
		t.Fatalf("the fast converter read what the YAML library refuses (%v):\n%s", err, text)
	}
	got, err := decodeNumbers(append(append([]byte("["), j...), ']'))
	if err != nil {
		t.Fatalf("the fast converter wrote invalid JSON %s (%v) for\n%s", j, err, text)
	}
	want, err := decodeNumbers(lib)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the fast converter read\n%s\nas %s, the YAML library as %s", text, j, lib)
	}
	return true
}

func decodeNumbers(j []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// TestYAMLItemMatchesLibrary: the elements of Encoder's YAML, and elements
// written by hand in and around the subset, convert as the library converts
// them.
func TestYAMLItemMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 6))
	for range 200 {
		b, err := Marshal(randomYAMLFleet(r, 3, r.IntN(2) == 0), FormatYAML)
		if err != nil {
			continue // a string YAML cannot hold
		}
		sp, ok := splitYAML(b)
		if !ok {
			t.Fatalf("not split:\n%s", b)
		}
		for _, it := range sp.items {
			checkYAMLItem(t, b[it[0]:it[1]], it[2])
		}
	}
	for _, s := range yamlItemSeeds {
		checkYAMLItem(t, []byte(s), 0)
		checkYAMLItem(t, []byte("  "+strings.ReplaceAll(s, "\n", "\n  ")), 2)
	}
	// What the fast converter must read, so that fleets take it.
	for _, s := range []string{
		"- id: a\n  num: 1\n  f: -2.5e-7\n  t: true\n  z: null\n  s: \"x y\"\n  q: 'it''s'\n",
		"- {a: [1, 2], b: {c: d}}\n",
		"- k:\n  - 1\n  - x\n  m:\n    p: o\n",
		"- k: \"é 日本\"\n  \"ü\": 'a''é'\n",
		"- k: a # c\n  # d\n  j: # e\n    - \"#\" # f\n",
		"- k: \"\\L\\U0001F600\\uFEFF\\\"\\\\\"\n",
	} {
		if !checkYAMLItem(t, []byte(s), 0) {
			t.Errorf("not on the fast path:\n%s", s)
		}
	}
}

var yamlItemSeeds = []string{
	"- id: a\n", "- a\n", "- 1\n", "- -0\n", "- 0.0\n", "- -0.0\n", "- 1e3\n", "- 1E+3\n", "- 1.5e-7\n",
	"- 1e400\n", "- 007\n", "- 0x1f\n", "- 1_000\n", "- .5\n", "- +1\n", "- 12345678901234567890\n",
	"- 2026-11-30\n", "- yes\n", "- No\n", "- ON\n", "- y\n", "- ~\n", "- null\n", "- Null\n", "- TRUE\n",
	"- a b\n", "- a  b \n", "- a: b: c\n", "- a:b\n", "- {a:b}\n", "- {a: b,c: d}\n", "- {a: b, }\n",
	"- [a,b]\n", "- [a, b, ]\n", "- [ a , b ]\n", "- {\"a\": 1, 'b': 2}\n", "- {\"a\":1}\n",
	"- k: [a, [b, {c: d}]]\n", "- k:\n- x\n", "- k:\n  - x\n  j: 1\n", "- k:\n    - x\n  j: 1\n",
	"- k: 1\n   j: 2\n", "- k: 1\n j: 2\n", "- k: a\n  b\n", "- k:\n    a\n", "- - a\n", "-\n  k: 1\n",
	"- k: 'a''b'\n", "- k: 'a'b'\n", "- k: \"a'b\"\n", "- k: \"a\" x\n", "- k: {} \n", "- k: []\n",
	"- k: {a: }\n", "- k: {a}\n", "- k: [a]]\n", "- k: a\n  k: b\n", "- \"k\": a\n  k: b\n", "- k: @a\n",
	"- k: %a\n", "- k: `a\n", "- k: a,b\n", "- k: a]\n", "- <<: {a: 1}\n", "- k: -\n", "- k: - a\n",
	"- k: a -b\n", "- 'k': 1\n", "- yes: 1\n", "- 1: a\n", "- k: 1.\n", "- k: -.5\n", "- k: 1.5.5\n",
	"- k:  \n  j: 1\n", "- k: a\n\n  j: 1\n", "- k:\n  j:\n    l: 1\n  m: 2\n",
	"- k: \"é\"\n", "- k: é\n", "- k: aé\n", "- é: 1\n", "- \"ü\": 1\n", "- k: '\u00a0'\n", "- k: \"a\u2028b\"\n",
	"- k: \"\u2029\"\n", "- k: \"\u0085\"\n", "- k: \"😀\"\n", "- k: \"\ufeff\"\n", "- k: \"\ufffd\ufffe\"\n", "- k: \"\xc3\"\n",
	"- k: a # c\n", "- k: a#c\n", "- k: \"a\"# c\n", "- k: \"a\" # c\n", "- k: # c\n  j: 1\n", "- k: # c\n    j: 1\n",
	"- # c\n  k: 1\n", "# c\n- k: 1\n", "- k: 1\n# c\n  j: 2\n", "- k: {a: b # c}\n", "- k: {a: b} # c\n", "- k: [a, #c\n",
	"- k: a\n  #c\n", "- k: a\n    #c\n", "- k: \"#\"\n", "- k: 'a #b'\n", "- k #c: 1\n", "- k: a  #c\n", "- k:\n  - a # c\n  # d\n  - b\n",
	"- k: \"a\\\"b\"\n", "- k: \"\\n\\t\\r\\0\\a\\b\\v\\f\\e\\ \\'\\\\\\N\\_\\L\\P\"\n", "- k: \"\\x41\\u00e9\\U0001F600\"\n",
	"- k: \"\\uD800\"\n", "- k: \"\\U00110000\"\n", "- k: \"\\/\"\n", "- k: \"\\q\"\n", "- k: \"\\\"\n", "- k: \"\\x4\"\n", "- k: \"\\x4g\"\n",
	"- k: \"\\u+123\"\n", "- \"k\\n\": 1\n  \"k\\x0a\": 2\n", "- k: \"a\\\n", "- k: \"\\x80\\xff\"\n", "- k: 'a\\b'\n", "- k: a\\b\n",
	"- k: \"\xed\xa0\x80\"\n", "- k: 1\r\n  j: 2\r\n", "- k: 1\r  j: 2\n", "- k: a\rb\n", "- k: \"a\rb\"\n", "- k: 1 \r\n", "- k: 'é''s'\n", "- k: [\"日本\", 'ü']\n", "- k: {\"é\": \"x\"}\n", "-\u00a0k: 1\n",
}

// FuzzYAMLItem: whatever the fast converter reads, the YAML library reads
// the same way.
func FuzzYAMLItem(f *testing.F) {
	for _, s := range yamlItemSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkYAMLItem(t, []byte(s), 0)
	})
}

// FuzzParseYAMLStream: on any input Parse does not panic, and the streamed
// reading of YAML agrees with reading the whole tree.
func FuzzParseYAMLStream(f *testing.F) {
	f.Add([]byte(validYAML))
	f.Add([]byte(oneYAML))
	f.Add([]byte(heldYAML))
	f.Add([]byte(oneYAML + "commitments:\n  - {id: sp, provider: aws, kind: compute-savings-plan, term: 1y, hourlyCommitment: 2.5}\n"))
	for _, e := range yamlEdits(validYAML) {
		f.Add([]byte(e))
	}
	f.Add([]byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - id: a\n    bogus: 1\n  - id: b\n    gpu: {count: \"8\"}\n"))
	f.Add([]byte("apiVersion: gpufinops/v1\nkind: Fleet\nmetadata: {name: \"x\ninstances:\n- id: a\nkind: y\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameResult(t, "fleet.yaml", data)
	})
}

// TestAppendJSONFloat: floats are written as encoding/json writes them.
func TestAppendJSONFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 1e-6, 1e-7, 9.999999e-7, 1e20, 1e21, 1.5e300, 5e-324, math.MaxFloat64}
	for range 5000 {
		vals = append(vals, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	for _, f := range vals {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, f); string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", f, got, want)
		}
		// And read back from YAML as that float.
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if got, ok := appendYAMLNumber(nil, []byte(s)); ok && string(got) != string(want) {
			t.Fatalf("%s read as %s, want %s", s, got, want)
		}
	}
}
