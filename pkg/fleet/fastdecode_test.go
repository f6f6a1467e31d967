package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// checkFastDecode is the fast path's contract on one element: when it
// decodes raw, the exact path accepts raw and gives the same instance.
func checkFastDecode(t *testing.T, raw []byte) (fast bool) {
	t.Helper()
	var in Instance
	d := fastDecoder{b: raw, strs: interner{}}
	if !d.decodeInstance(instancePlan(), &in) {
		return false
	}
	want, err := exactInstance(raw, 0, interner{})
	if err != nil {
		t.Fatalf("the fast path decoded what the exact path refuses (%v):\n%s", err, raw)
	}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("the fast path decoded\n%s\ninto\n%#v\nthe exact path into\n%#v", raw, in, want)
	}
	return true
}

func TestInstancePlanCoversInstance(t *testing.T) {
	if instancePlan() == nil {
		t.Fatal("some field of Instance has a type the fast path does not handle: every instance would take the exact path")
	}
	// A type the fast path cannot mirror gives no plan.
	type embedded struct{ A string }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ N int8 }](),
		reflect.TypeFor[struct{ embedded }](),
		reflect.TypeFor[struct {
			A string `json:"a,string"`
		}](),
		reflect.TypeFor[struct{ V any }](),
		reflect.TypeFor[map[int]string](),
		reflect.TypeFor[map[string]float64](),
		reflect.TypeFor[json.RawMessage](),
	} {
		if p, ok := planFor(typ, map[reflect.Type]bool{}); ok || p != nil {
			t.Errorf("%v got a plan", typ)
		}
	}
}

// TestFastDecodeRandomInstances: every instance json.Marshal writes (random
// values of every field, strings with escapes and non-ASCII) takes the fast
// path and decodes as the exact path decodes it, indented or not.
func TestFastDecodeRandomInstances(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	for i := range 3000 {
		in := randomInstance(r)
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			var b bytes.Buffer
			if err := json.Indent(&b, raw, " ", "\t"); err != nil {
				t.Fatal(err)
			}
			raw = b.Bytes()
		}
		if !checkFastDecode(t, raw) {
			t.Fatalf("instance %d took the exact path:\n%s", i, raw)
		}
	}
}

// TestFastDecodeDeclines: what the checks refuse, or what json.Unmarshal
// decodes in its own way, takes the exact path.
func TestFastDecodeDeclines(t *testing.T) {
	for _, raw := range []string{
		`{"ID": "i-1"}`,                                 // spelt otherwise: the checks name it
		`{"i\u0064": "i-1"}`,                            // escaped key
		`{"id": "a", "id": "b"}`,                        // repeated key
		`{"vcpus": "8"}`,                                // a string for a number
		`{"vcpus": 1e400}`,                              // out of range
		`{"tags": {"a": 1}}`,                            // a number for a string
		`{"launchTime": "2026-11-30"}`,                  // not RFC 3339
		`{"launchTime": 5}`,                             // not a string
		`{"utilization": {"samples": [{"gpu": null}]}}`, // PerGPU's UnmarshalJSON gets null
		`{"utilization": {"samples": [{"gpu": [1, null]}]}}`,
		`{"utilization": {"samples": [{"gpu": "5"}]}}`,
		`{"hourlyPrice": "1.5"}`,
		`{"gpu": []}`,
		`[]`,
		`"x"`,
		`{"id": "a"} x`,
	} {
		var in Instance
		d := fastDecoder{b: []byte(raw), strs: interner{}}
		if d.decodeInstance(instancePlan(), &in) {
			t.Errorf("the fast path decoded %s", raw)
		}
	}
	// And these it takes, as the exact path does.
	for _, raw := range []string{
		`null`, `{}`, ` { } `,
		`{"id": null, "tags": null, "utilization": null, "launchTime": null}`,
		`{"tags": {"k": null, "é\u00e9": "\u00e9"}}`,
		`{"utilization": {"samples": [], "gpu": {"avg": -0, "p95": 1E2, "max": 1.5e-3}}}`,
		`{"utilization": {"samples": [{"time": "2026-11-30T00:00:00.5+01:00", "gpu": 3, "gpuMemory": []}, null]}}`,
		`{"hourlyPrice": 1.2345678901234567890123, "commitment": {"hourlyRate": 0}}`,
		`{"usage": {"schedule": {"windows": [{"days": ["mon", null], "start": "08:00", "end": "18:00"}]}}}`,
		"{\"name\": \"a\xb0b\"}", // invalid UTF-8: json's replacement character
	} {
		if !checkFastDecode(t, []byte(raw)) {
			t.Errorf("the fast path declined %s", raw)
		}
	}
}

// FuzzFastDecode: on any valid JSON, a fast decoding is the exact one.
func FuzzFastDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(16, 2))
	for range 8 {
		raw, _ := json.Marshal(randomInstance(r))
		f.Add(raw)
	}
	if golden, err := os.ReadFile("testdata/full.json.golden"); err == nil {
		var doc struct{ Instances []json.RawMessage }
		if json.Unmarshal(golden, &doc) == nil {
			for _, in := range doc.Instances {
				f.Add([]byte(in))
			}
		}
	}
	f.Add([]byte(`{"utilization": {"samples": [{"gpu": null}]}}`))
	f.Add([]byte(`{"tags": {"k": null, "\u00e9": "x"}, "id": "a", "id": "b"}`))
	f.Add([]byte(`{"hourlyPrice": 1e400, "vcpus": -0.0}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		checkFastDecode(t, raw)
	})
}

// BenchmarkDecodeInstance compares the two paths on the first instance of
// the full fleet example (samples, schedule, tags, workload).
func BenchmarkDecodeInstance(b *testing.B) {
	golden, err := os.ReadFile("testdata/full.json.golden")
	if err != nil {
		b.Fatal(err)
	}
	var doc struct{ Instances []json.RawMessage }
	if err := json.Unmarshal(golden, &doc); err != nil || len(doc.Instances) == 0 {
		b.Fatal("no instances in the example", err)
	}
	raw := []byte(doc.Instances[0])
	b.Run("fast", func(b *testing.B) {
		strs := interner{}
		for b.Loop() {
			var in Instance
			d := fastDecoder{b: raw, strs: strs}
			if !d.decodeInstance(instancePlan(), &in) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("exact", func(b *testing.B) {
		strs := interner{}
		for b.Loop() {
			if _, err := exactInstance(raw, 0, strs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// randomInstance fills every field of an Instance, each left out at times.
func randomInstance(r *rand.Rand) Instance {
	str := func() string {
		parts := []string{"a", "gpu", "us-east-1", "é", "<&>", `"q"`, `\`, "\n", "\u2028", "日本", " ", "x_y-z", "\x7f"}
		var b strings.Builder
		for range r.IntN(4) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		return b.String()
	}
	num := func() float64 {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return float64(r.IntN(1000))
		case 2:
			return -r.Float64() * 1e6
		case 3:
			return math.SmallestNonzeroFloat64 * float64(r.IntN(10))
		case 4:
			return 1e300 * r.Float64()
		}
		return r.Float64() * 100
	}
	maybe := func() bool { return r.IntN(3) > 0 }
	fp := func() *float64 {
		if !maybe() {
			return nil
		}
		v := num()
		return &v
	}
	tm := func() time.Time {
		t := time.Unix(r.Int64N(4e9), 0)
		if maybe() {
			t = t.Add(time.Duration(r.IntN(1e9)))
		}
		if r.IntN(2) == 0 {
			return t.UTC()
		}
		return t.In(time.FixedZone("", (r.IntN(48)-24)*1800))
	}
	dec := func() *decimal.Decimal {
		if !maybe() {
			return nil
		}
		d := decimal.New(r.Int64N(1e12)-5e11, -int32(r.IntN(12)))
		return &d
	}
	per := func() PerGPU {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return PerGPU{num()}
		}
		p := make(PerGPU, r.IntN(9))
		for i := range p {
			p[i] = num()
		}
		return p
	}
	in := Instance{
		ID: str(), Name: str(), Provider: Provider(str()), Account: str(), Region: str(), Zone: str(),
		InstanceType: str(), VCPUs: num(), MemoryGiB: num(), Lifecycle: Lifecycle(str()), State: State(str()),
		InstanceStoreGB: num(), Hibernation: maybe(), StoppedAllocated: maybe(), SpotInterruption: SpotInterruption(str()), HourlyPrice: dec(),
	}
	if maybe() {
		in.GPU = GPU{Model: str(), Count: num(), MemoryGiB: num()}
	}
	if maybe() {
		for range 1 + r.IntN(3) {
			in.PlacementGroups = append(in.PlacementGroups, str())
		}
	}
	if maybe() {
		for range 1 + r.IntN(3) {
			in.ResourcePolicies = append(in.ResourcePolicies, str())
		}
	}
	if maybe() {
		t := tm()
		in.LaunchTime = &t
	}
	if maybe() {
		in.Usage = Usage{HoursPerMonth: fp(), HoursPerWeek: fp()}
		if maybe() {
			s := &Schedule{Timezone: str()}
			for range r.IntN(3) {
				w := Window{Start: str(), End: str()}
				for range r.IntN(3) {
					w.Days = append(w.Days, str())
				}
				s.Windows = append(s.Windows, w)
			}
			in.Usage.Schedule = s
		}
	}
	if maybe() {
		in.Tags = map[string]string{}
		for range r.IntN(6) {
			in.Tags[str()] = str()
		}
	}
	if maybe() {
		st := func() *Stats {
			if !maybe() {
				return nil
			}
			return &Stats{Avg: num(), P95: num(), Max: num()}
		}
		u := &Utilization{GPU: st(), GPUMemory: st(), CPU: st(), Memory: st(), Source: str(), Coverage: fp()}
		if maybe() {
			u.Window = &TimeRange{Start: tm(), End: tm()}
		}
		for range r.IntN(5) {
			u.Samples = append(u.Samples, Sample{Time: tm(), GPU: per(), GPUMemory: per(), CPU: fp(), Memory: fp()})
		}
		in.Utilization = u
	}
	if maybe() {
		w := &Workload{Type: WorkloadType(str()), Model: str(), ParamsBillions: num(), Precision: str(),
			TokensPerSecond: num(), RequestsPerSecond: num(), TrainingRun: str(), TrainingRunHours: num()}
		if maybe() {
			c := maybe()
			w.Checkpoints = &c
		}
		in.Workload = w
	}
	if maybe() {
		in.ManagedBy = &ManagedBy{Kind: OwnerKind(str()), Name: str()}
	}
	if maybe() {
		in.Commitment = &Commitment{Kind: str(), Term: str(), Payment: str(), HourlyRate: dec()}
	}
	if maybe() {
		ip := func() *int {
			if !maybe() {
				return nil
			}
			n := r.IntN(20) - 2
			return &n
		}
		m := &Managed{Service: ManagedService(str()), Kind: ManagedKind(str()), Workspace: str(), Endpoint: str(),
			Deployment: str(), Serverless: maybe(), Async: maybe(), InferenceComponents: r.IntN(4), ScaleToZero: maybe(),
			IdleShutdownMinutes: fp(), Requests: fp(), Jobs: fp(), PriceType: str()}
		if maybe() {
			m.Replicas = &Replicas{Current: r.IntN(6) - 1, Min: ip(), Max: ip()}
		}
		in.Managed = m
	}
	return in
}

// The fields randomInstance fills are every field of Instance: a new one
// must be added there too.
func TestRandomInstanceFillsEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 4))
	set := map[string]bool{}
	for range 200 {
		v := reflect.ValueOf(randomInstance(r))
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[v.Type().Field(i).Name] = true
			}
		}
	}
	for i := range instanceType.NumField() {
		if name := instanceType.Field(i).Name; !set[name] {
			t.Errorf("randomInstance never sets %s", name)
		}
	}
}

// TestCountElements: on valid lists, countElements counts what
// json.Unmarshal decodes.
func TestCountElements(t *testing.T) {
	for _, l := range []string{`[1]`, `[1, 2, 3]`, `["a,b", "c\"", "d\\", "e\\\"f,"]`, `[[1, 2], {"a": [3, 4]}, "]"]`,
		`[{"time": "2026-11-16T00:00:00Z", "gpu": [1, 2]}, {"x": "\\\\"}, {"y": ","}]`} {
		var v []json.RawMessage
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		if got := countElements([]byte(l+`, "tail"]`), 0); got != len(v) {
			t.Errorf("%s: %d elements, want %d", l, got, len(v))
		}
	}
}

// TestCountElementsRandomLists: on random lists of nested values (strings
// with quotes, backslashes, brackets and commas among them), countElements
// counts the elements, and reads no further than the list.
func TestCountElementsRandomLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 4))
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(6); {
		case k == 0 && depth < 3:
			l := make([]any, rng.IntN(4))
			for i := range l {
				l[i] = value(depth + 1)
			}
			return l
		case k == 1 && depth < 3:
			m := map[string]any{}
			for range rng.IntN(3) {
				m[string(rune('a'+rng.IntN(5)))+`",\]}`] = value(depth + 1)
			}
			return m
		case k == 2:
			b := make([]byte, rng.IntN(6))
			for i := range b {
				b[i] = `"\,[]{}a`[rng.IntN(8)]
			}
			return string(b)
		default:
			return rng.Float64()
		}
	}
	for range 3000 {
		l := make([]any, 1+rng.IntN(8))
		for i := range l {
			l[i] = value(0)
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if got := countElements(append(b, `, ["tail"]]`...), 0); got != len(l) {
			t.Fatalf("%s: %d elements, want %d", b, got, len(l))
		}
	}
}

// TestTimeCacheKeepsSharedWindows: instances that share a window's start and
// end among up to nine sample times of their own find the window in the
// cache from the second instance on, however many samples push through.
func TestTimeCacheKeepsSharedWindows(t *testing.T) {
	var c timeCache
	found, sample := 0, 0
	read := func(raw string) {
		if _, ok, slot := c.find([]byte(raw)); ok {
			found++
		} else {
			c.keep(slot, []byte(raw), time.Time{})
		}
	}
	for i := range 100 {
		read(`"2026-11-16T00:00:00Z"`)
		read(`"2026-11-30T00:00:00Z"`)
		for range (i + 5) % 10 {
			sample++
			read(fmt.Sprintf(`"2026-11-29T00:%02d:%02dZ"`, sample/60%60, sample%60))
		}
	}
	if found != 2*99 {
		t.Fatalf("the shared window was found %d times, want %d", found, 2*99)
	}
}

// TestFastDecodeAnyKeyOrder: the fast path looks for a key first among the
// fields declared after the last one's, so instances whose objects give
// their keys in any order (every object's shuffled) must still take it and
// decode as the exact path does.
func TestFastDecodeAnyKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2))
	for i := range 2000 {
		raw, err := json.Marshal(randomInstance(r))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var tree any
		if err := dec.Decode(&tree); err != nil {
			t.Fatal(err)
		}
		shuffled := appendShuffled(t, nil, tree, r)
		if !checkFastDecode(t, shuffled) {
			t.Fatalf("instance %d with its keys shuffled took the exact path:\n%s", i, shuffled)
		}
	}
}

// appendShuffled appends v as JSON with every object's keys in random order.
func appendShuffled(t *testing.T, b []byte, v any, r *rand.Rand) []byte {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendShuffled(t, b, k, r)
			b = append(b, ':')
			b = appendShuffled(t, b, v[k], r)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendShuffled(t, b, e, r)
		}
		return append(b, ']')
	default:
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, enc...)
	}
}
