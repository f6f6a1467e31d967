package report

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// encoderJSON is what writeJSON wrote before it streamed: the whole document
// through one json.Encoder.
func encoderJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func streamJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeJSONStream(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteJSONStreamMatchesEncoder: the streamed report is byte for byte the
// encoder's, for a full report, an empty one, and values exercising
// omitempty, omitzero, nil and empty lists, HTML characters and nesting.
func TestWriteJSONStreamMatchesEncoder(t *testing.T) {
	type inner struct {
		A string  `json:"a,omitempty"`
		B []int   `json:"b"`
		C *Number `json:"c,omitempty"`
	}
	type odd struct {
		Empty    []string       `json:"empty"`
		Nil      []string       `json:"nil"`
		Omit     []string       `json:"omit,omitempty"`
		Zero     time.Time      `json:"zero,omitzero"`
		When     time.Time      `json:"when"`
		Map      map[string]int `json:"map"`
		HTML     string         `json:"html"`
		Inner    inner          `json:"inner"`
		Ptr      *inner         `json:"ptr"`
		NilPtr   *inner         `json:"nilPtr"`
		List     []inner        `json:"list"`
		Deep     [][]inner      `json:"deep"`
		Any      any            `json:"any"`
		Skip     string         `json:"-"`
		Dash     string         `json:"-,"`
		NoTag    int
		Money    Money             `json:"money"`
		Tags     map[string]string `json:"tags,omitempty"`
		Angle    int               `json:"a<b&c"`
		unexport int
	}
	n := NewNumber(dec("1.25"))
	vals := map[string]any{
		"report":       New(testPlan(), Meta{GeneratedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}),
		"empty report": &Report{},
		"odd": odd{
			Empty: []string{}, When: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Map: map[string]int{"b": 2, "a": 1},
			HTML: "<a href='x'>&</a>", Inner: inner{B: []int{}}, Ptr: &inner{A: "x", C: &n},
			List: []inner{{A: "1"}, {B: []int{1, 2}}}, Deep: [][]inner{{{A: "d"}}, {}}, Any: map[string]any{"k": []int{1}},
			Skip: "no", Dash: "yes", NoTag: 3, Money: NewMoney(dec("12.345")), Angle: 4, unexport: 1,
		},
		"empty struct": struct{}{},
		"list":         []odd{{}, {}},
	}
	for name, v := range vals {
		t.Run(name, func(t *testing.T) {
			want, got := encoderJSON(t, v), streamJSON(t, v)
			if !bytes.Equal(got, want) {
				t.Errorf("streamed JSON differs from the encoder's\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// TestConsumeIsNew: Consume gives New's report and empties the plan.
func TestConsumeIsNew(t *testing.T) {
	meta := Meta{GeneratedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), FleetName: "f"}
	want := encoderJSON(t, New(testPlan(), meta))
	plan := testPlan()
	got := encoderJSON(t, Consume(&plan, meta))
	if !bytes.Equal(got, want) {
		t.Errorf("Consume's report differs from New's:\n%s\n%s", got, want)
	}
	if plan.Recommendations != nil || plan.Instances != nil || !reflect.DeepEqual(plan, recommend.Plan{}) {
		t.Error("the plan is not released")
	}
}

// TestWriteConsumedIsWrite: WriteConsumed writes New's JSON report byte for
// byte, for a full plan, a plan without recommendations or instances and an
// empty one, and empties the plan.
func TestWriteConsumedIsWrite(t *testing.T) {
	meta := testMeta()
	plans := map[string]func() recommend.Plan{
		"full": testPlan,
		"no recommendations": func() recommend.Plan {
			p := testPlan()
			p.Recommendations = nil
			return p
		},
		"no instances": func() recommend.Plan {
			p := testPlan()
			p.Instances = []recommend.InstanceCost{}
			return p
		},
		"empty": func() recommend.Plan { return recommend.Plan{} },
	}
	for name, mk := range plans {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			if err := Write(&want, New(mk(), meta), "json", PrintOptions{}); err != nil {
				t.Fatal(err)
			}
			plan := mk()
			if err := WriteConsumed(&got, &plan, meta); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("WriteConsumed differs from Write:\n%s\nwant:\n%s", got.Bytes(), want.Bytes())
			}
			if !reflect.DeepEqual(plan, recommend.Plan{}) {
				t.Error("the plan is not released")
			}
		})
	}
}

// TestWriteConsumedError: a failing writer's error is returned.
func TestWriteConsumedError(t *testing.T) {
	plan := testPlan()
	if err := WriteConsumed(failingWriter{}, &plan, testMeta()); err == nil {
		t.Fatal("no error from a failing writer")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }
