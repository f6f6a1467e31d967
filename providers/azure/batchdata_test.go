package azure

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// checkBatchData decodes b with batchData's decoder and with encoding/json
// over plain []batchPoint, and fails when they disagree.
func checkBatchData(t *testing.T, b []byte) {
	t.Helper()
	if !json.Valid(b) {
		return
	}
	var got batchData
	gotErr := json.Unmarshal(b, &got)
	var want []batchPoint
	wantErr := json.Unmarshal(b, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", b, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual([]batchPoint(got), want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", b, got, want)
	}
}

// randomBatchData writes a data array as the API sends it (time stamps,
// averages, nulls) and as it might (other aggregations, keys in other
// cases, repeated or escaped keys, nested values, odd spacing, elements
// that are not objects, values of the wrong type).
func randomBatchData(rng *rand.Rand) string {
	keys := []string{"timeStamp", "timeStamp", "average", "average", "maximum", "timestamp", "AVERAGE", "Maximum", "minimum", "total", "count", `time\u0053tamp`, "avérage", "x"}
	values := []string{"12.5", "0", "-3", "1e2", "100.000", "null", `"2026-11-30T01:00:00Z"`, `"2026-11-30T01:00:00+01:00"`, `"not a time"`, `"12"`, "true", `{"a":[1,{"b":"}"}]}`, `[1,2,"]"]`, `"a\"b"`}
	sp := func() string { return []string{"", " ", "\n\t", "  "}[rng.IntN(4)] }
	var b strings.Builder
	if rng.IntN(30) == 0 {
		return "null"
	}
	b.WriteString("[" + sp())
	for i, n := 0, rng.IntN(6); i < n; i++ {
		if i > 0 {
			b.WriteString("," + sp())
		}
		switch rng.IntN(25) {
		case 0:
			b.WriteString("null")
			continue
		case 1:
			b.WriteString("7")
			continue
		}
		b.WriteString("{" + sp())
		for j, m := 0, rng.IntN(5); j < m; j++ {
			if j > 0 {
				b.WriteString("," + sp())
			}
			k := keys[rng.IntN(len(keys))]
			v := values[rng.IntN(len(values))]
			if rng.IntN(3) > 0 { // mostly what the API sends
				switch {
				case strings.EqualFold(k, "timeStamp"):
					v = fmt.Sprintf(`"2026-11-%02dT%02d:00:00Z"`, 1+rng.IntN(28), rng.IntN(24))
				case strings.EqualFold(k, "average"), strings.EqualFold(k, "maximum"):
					v = fmt.Sprintf("%g", rng.Float64()*100)
				}
			}
			fmt.Fprintf(&b, `"%s"%s:%s%s`, k, sp(), sp(), v)
		}
		b.WriteString(sp() + "}")
	}
	b.WriteString(sp() + "]")
	return b.String()
}

// TestBatchDataMatchesEncodingJSON: on random arrays the hand decoder gives
// encoding/json's result, and the API's own form takes the hand path.
func TestBatchDataMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 4))
	for i := 0; i < 3000; i++ {
		checkBatchData(t, []byte(randomBatchData(rng)))
	}
	api := `[{"timeStamp":"2026-11-30T00:00:00Z","average":1.5},{"timeStamp":"2026-11-30T01:00:00Z"},{"timeStamp":"2026-11-30T02:00:00Z","average":null,"maximum":3}]`
	if out, ok, err := parseBatchData([]byte(api)); !ok || err != nil || len(out) != 3 || !out[0].Average.ok || out[1].Average.ok || out[2].Maximum.v != 3 {
		t.Errorf("the API's form: %+v ok=%v err=%v", out, ok, err)
	}
}

// FuzzBatchData: for any valid JSON, the hand decoder agrees with
// encoding/json.
func FuzzBatchData(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 4))
	for i := 0; i < 12; i++ {
		f.Add([]byte(randomBatchData(rng)))
	}
	f.Add([]byte(`[{"timeStamp":"2026-11-30T00:00:00Z","average":1.5,"average":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) { checkBatchData(t, b) })
}
