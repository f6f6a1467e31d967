package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkIndent compares appendIndent with json.Indent on the compact form
// of a valid JSON text.
func checkIndent(t *testing.T, in []byte) {
	t.Helper()
	if !json.Valid(in) {
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, in); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, compact.Bytes(), "    ", "  "); err != nil {
		t.Fatal(err)
	}
	if got := appendIndent(nil, compact.Bytes(), "    ", "  "); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s:\n got %s\nwant %s", compact.Bytes(), got, want.Bytes())
	}
}

func TestAppendIndentMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[{}]}`, `[1,2,[3,[4,{}]]]`, `"x"`, `12`, `null`,
		`{"k\"ey":"v,a:l{u}e[","e":"\\","u":"\u2028<&>"}`, `{"a":{"b":{"c":[true,false,null,-1.5e10]}}}`,
		"\n { \"a\" : [ 1 , 2 ] }\n",
	} {
		checkIndent(t, []byte(in))
	}
	r := map[string]any{"id": "i-1", "tags": map[string]string{}, "list": []any{1.5, "s", nil, map[string]any{"x": []int{}}}}
	b, _ := json.Marshal(r)
	checkIndent(t, b)
}

func FuzzAppendIndent(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c"}],"d":{}}`, `[[],{},"\"\\"]`, `{"x":"{[,:]}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkIndent(t, b) })
}
