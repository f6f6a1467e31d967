package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// marshalWhole is the encoding Marshal had before it streamed: the whole
// document through one JSON encoder and, for YAML, one node tree. Write must
// give its bytes.
func marshalWhole(f *Fleet, format string) ([]byte, error) {
	g := *f
	if g.Instances == nil {
		g.Instances = []Instance{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if format == FormatJSON {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(&g); err != nil {
		return nil, err
	}
	if format == FormatJSON {
		return buf.Bytes(), nil
	}
	return jsonToYAML(buf.Bytes())
}

// randomFleet is a fleet of n random instances (randomInstance) under
// random metadata.
func randomFleet(r *rand.Rand, n int) *Fleet {
	f := &Fleet{APIVersion: APIVersion, Kind: Kind}
	switch r.IntN(4) {
	case 0:
	case 1:
		f.Metadata.Name = "m"
	default:
		t := time.Unix(r.Int64N(4e9), int64(r.IntN(1e9))).UTC()
		f.Metadata = Metadata{Name: "n: <&> \"q\"", Description: "yes", GeneratedAt: &t, Source: "aws,azure\n"}
		for range r.IntN(3) {
			f.Metadata.Warnings = append(f.Metadata.Warnings, ScanWarning{Code: ScanScopeFailed, Provider: AWS, Account: "111122223333", Region: "us-east-1"})
		}
	}
	if n > 0 || r.IntN(2) == 0 {
		f.Instances = make([]Instance, n)
	}
	for i := range f.Instances {
		f.Instances[i] = randomInstance(r)
	}
	return f
}

// TestWriteIsWholeDocument: streaming an instance at a time gives the bytes
// of encoding the whole document, for 0, 1 and many instances of every
// field's edge cases, in JSON and YAML, and the YAML reads back.
func TestWriteIsWholeDocument(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 6))
	compared := map[string]int{}
	for i := range 600 {
		n := []int{0, 1, 2, 3, 17}[i%5]
		f := randomFleet(r, n)
		for _, format := range []string{FormatJSON, FormatYAML} {
			if format == FormatYAML && i%2 == 0 {
				f = withoutDEL(t, f)
			}
			want, wantErr := marshalWhole(f, format)
			got, err := Marshal(f, format)
			if wantErr != nil {
				// YAML has no way to write some strings (a DEL byte): the
				// stream refuses what the whole document refused.
				if err == nil {
					t.Fatalf("fleet %d, %s: streamed what the whole document refused (%v)", i, format, wantErr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("fleet %d, %s: %v", i, format, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("fleet %d (%d instances), %s: streamed\n%s\nwhole\n%s", i, n, format, got, want)
			}
			compared[format+" "+strconv.Itoa(min(n, 2))]++
		}
	}
	for _, format := range []string{FormatJSON, FormatYAML} {
		for n := range 3 {
			if k := format + " " + strconv.Itoa(n); compared[k] < 30 {
				t.Errorf("only %d fleets compared as %s instances (0, 1, 2 and more)", compared[k], k)
			}
		}
	}
}

// withoutDEL is f with every DEL byte (which YAML cannot write) made a
// tilde, through its JSON.
func withoutDEL(t *testing.T, f *Fleet) *Fleet {
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var g Fleet
	if err := json.Unmarshal(bytes.ReplaceAll(b, []byte{0x7f}, []byte("~")), &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// failAfter fails every write after the first n.
type failAfter struct{ n int }

var errFull = errors.New("disk full")

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errFull
	}
	w.n--
	return len(p), nil
}

// TestWriteReportsWriteErrors: a failing writer's error comes back from
// whichever write the encoder makes it hits, the header's, an instance's or
// the end's, and from Write's buffer.
func TestWriteReportsWriteErrors(t *testing.T) {
	f := randomFleet(rand.New(rand.NewPCG(1, 2)), 3)
	for i := range f.Instances {
		f.Instances[i] = Instance{ID: "i-" + strconv.Itoa(i), Provider: AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Tags: map[string]string{"team": "ml"}}
	}
	for _, format := range []string{FormatJSON, FormatYAML} {
		writes := 0
		for n := 0; ; n++ {
			err := encodeAll(&failAfter{n: n}, f, format)
			if err == nil {
				writes = n
				break
			}
			if !errors.Is(err, errFull) {
				t.Fatalf("%s, failing after %d writes: %v", format, n, err)
			}
		}
		if writes < 4 {
			t.Errorf("%s: %d writes for a header and 3 instances", format, writes)
		}
	}
	for _, format := range []string{FormatJSON, FormatYAML} {
		if err := Write(&failAfter{}, f, format); !errors.Is(err, errFull) {
			t.Errorf("%s: Write through its buffer: %v, want %v", format, err, errFull)
		}
	}
	if _, err := NewEncoder(&bytes.Buffer{}, f, "toml"); err == nil {
		t.Error("an unknown format was accepted")
	}
}
