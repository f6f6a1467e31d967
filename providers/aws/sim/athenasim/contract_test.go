package athenasim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// model is the part of a botocore service model (service-2.json) the
// contract reads.
type model struct {
	Metadata struct {
		Protocol     string `json:"protocol"`
		TargetPrefix string `json:"targetPrefix"`
	} `json:"metadata"`
	Operations map[string]struct {
		Input  struct{ Shape string }   `json:"input"`
		Output struct{ Shape string }   `json:"output"`
		Errors []struct{ Shape string } `json:"errors"`
	} `json:"operations"`
	Shapes map[string]*shape `json:"shapes"`
}

type shape struct {
	Type      string            `json:"type"`
	Members   map[string]member `json:"members"`
	Required  []string          `json:"required"`
	Member    *member           `json:"member"`
	Key       *member           `json:"key"`
	Value     *member           `json:"value"`
	Enum      []string          `json:"enum"`
	Min       *float64          `json:"min"`
	Max       *float64          `json:"max"`
	Pattern   string            `json:"pattern"`
	Exception bool              `json:"exception"`
	Fault     bool              `json:"fault"`
	Error     struct {
		HTTPStatusCode int `json:"httpStatusCode"`
	} `json:"error"`
}

type member struct {
	Shape string `json:"shape"`
}

// loadModel reads the vendored, trimmed botocore Athena model.
func loadModel(t testing.TB) *model {
	t.Helper()
	b, err := os.ReadFile("testdata/botocore/athena-2017-05-18.json")
	if err != nil {
		t.Fatal(err)
	}
	var m model
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Metadata.Protocol != "json" || m.Metadata.TargetPrefix != "AmazonAthena" {
		t.Fatalf("model metadata %+v: want the json protocol, target prefix AmazonAthena", m.Metadata)
	}
	return &m
}

// check lists how v (decoded JSON) breaks shape name, each problem with its
// path: unknown or missing members, wrong JSON types, enum values, lengths
// and ranges, patterns.
func (m *model) check(name string, v any, path string) []string {
	s := m.Shapes[name]
	if s == nil {
		return []string{path + ": the model has no shape " + name}
	}
	if v == nil {
		return nil // null is an absent member
	}
	bad := func(format string, a ...any) []string { return []string{path + ": " + fmt.Sprintf(format, a...)} }
	switch s.Type {
	case "structure":
		obj, ok := v.(map[string]any)
		if !ok {
			return bad("%s is a structure, got %T", name, v)
		}
		var out []string
		for _, k := range sortedKeys(obj) {
			mem, ok := s.Members[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: %s has no member %s", path, k, name, k))
				continue
			}
			out = append(out, m.check(mem.Shape, obj[k], path+"."+k)...)
		}
		for _, r := range s.Required {
			if obj[r] == nil {
				out = append(out, fmt.Sprintf("%s: %s's required member %s is missing", path, name, r))
			}
		}
		return out
	case "list":
		arr, ok := v.([]any)
		if !ok {
			return bad("%s is a list, got %T", name, v)
		}
		out := m.length(s, name, float64(len(arr)), path)
		for i, e := range arr {
			out = append(out, m.check(s.Member.Shape, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case "map":
		obj, ok := v.(map[string]any)
		if !ok {
			return bad("%s is a map, got %T", name, v)
		}
		var out []string
		for _, k := range sortedKeys(obj) {
			out = append(out, m.check(s.Key.Shape, k, path+"{key}")...)
			out = append(out, m.check(s.Value.Shape, obj[k], path+"."+k)...)
		}
		return out
	case "string":
		str, ok := v.(string)
		if !ok {
			return bad("%s is a string, got %T", name, v)
		}
		out := m.length(s, name, float64(len([]rune(str))), path)
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			out = append(out, fmt.Sprintf("%s: %q is not one of %s's values %v", path, str, name, s.Enum))
		}
		if s.Pattern != "" {
			if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(str) {
				out = append(out, fmt.Sprintf("%s: %q does not match %s's pattern %s", path, str, name, s.Pattern))
			}
		}
		return out
	case "integer", "long":
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) {
			return bad("%s is an integer, got %T %v", name, v, v)
		}
		return m.length(s, name, n, path)
	case "double", "float":
		if _, ok := v.(float64); !ok {
			return bad("%s is a number, got %T", name, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("%s is a boolean, got %T", name, v)
		}
	case "timestamp":
		// The json protocol sends timestamps as epoch seconds.
		if _, ok := v.(float64); !ok {
			return bad("%s is a timestamp (epoch seconds), got %T", name, v)
		}
	case "blob":
		if _, ok := v.(string); !ok {
			return bad("%s is a blob (base64), got %T", name, v)
		}
	default:
		return bad("%s has type %q, which this checker does not know", name, s.Type)
	}
	return nil
}

// length checks a size or value against the shape's min and max.
func (m *model) length(s *shape, name string, n float64, path string) []string {
	if s.Min != nil && n < *s.Min || s.Max != nil && n > *s.Max {
		lo, hi := "-", "-"
		if s.Min != nil {
			lo = fmt.Sprint(*s.Min)
		}
		if s.Max != nil {
			hi = fmt.Sprint(*s.Max)
		}
		return []string{fmt.Sprintf("%s: %v is outside %s's range [%s, %s]", path, n, name, lo, hi)}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// protocolErrors are the errors of the json protocol itself, which every
// operation may return besides the ones its model lists (the AWS "common
// errors").
var protocolErrors = []string{"MissingAuthenticationTokenException", "UnknownOperationException", "SerializationException"}

// checkExchange checks one request and its answer against operation op:
// the request body against the input shape, a 200 answer against the
// output shape, any other against one of the errors the operation (or the
// protocol) has, with the HTTP status the model gives it.
func (m *model) checkExchange(op string, req []byte, status int, header http.Header, body []byte) []string {
	o, ok := m.Operations[op]
	if !ok {
		return []string{op + ": not an operation of the model"}
	}
	var out []string
	var in any
	if err := json.Unmarshal(req, &in); err != nil {
		out = append(out, op+" request: "+err.Error())
	} else {
		out = append(out, m.check(o.Input.Shape, in, op+" request")...)
	}
	if ct := header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		out = append(out, fmt.Sprintf("%s answer: Content-Type %q, want application/x-amz-json-1.1", op, ct))
	}
	var ans any
	if err := json.Unmarshal(body, &ans); err != nil {
		return append(out, op+" answer: "+err.Error())
	}
	if status == http.StatusOK {
		return append(out, m.check(o.Output.Shape, ans, op)...)
	}
	obj, _ := ans.(map[string]any)
	typ, _ := obj["__type"].(string)
	if typ == "" || header.Get("X-Amzn-ErrorType") != typ {
		return append(out, fmt.Sprintf("%s error (%d): __type %q, X-Amzn-ErrorType %q", op, status, typ, header.Get("X-Amzn-ErrorType")))
	}
	if slices.Contains(protocolErrors, typ) {
		return out
	}
	declared := false
	for _, e := range o.Errors {
		declared = declared || e.Shape == typ
	}
	if !declared {
		return append(out, fmt.Sprintf("%s error: %s is not one of the operation's errors %v", op, typ, o.Errors))
	}
	// The model's status, else the protocol's: 5xx for a fault (the
	// service's failure), 4xx for the caller's.
	switch es := m.Shapes[typ]; {
	case es.Error.HTTPStatusCode != 0 && es.Error.HTTPStatusCode != status:
		out = append(out, fmt.Sprintf("%s error %s: HTTP %d, the model says %d", op, typ, status, es.Error.HTTPStatusCode))
	case es.Error.HTTPStatusCode == 0 && es.Fault && status < 500:
		out = append(out, fmt.Sprintf("%s error %s: HTTP %d for a fault, want 5xx", op, typ, status))
	case es.Error.HTTPStatusCode == 0 && !es.Fault && (status < 400 || status >= 500):
		out = append(out, fmt.Sprintf("%s error %s: HTTP %d for a client error, want 4xx", op, typ, status))
	}
	rest := map[string]any{}
	for k, v := range obj {
		if k != "__type" {
			rest[k] = v
		}
	}
	return append(out, m.check(typ, rest, op+" error")...)
}

// exchange is one request to the simulator and its answer.
type exchange struct {
	op     string
	req    []byte
	status int
	header http.Header
	body   []byte
}

// call sends a signed-looking request for op to h.
func call(t *testing.T, h http.Handler, op string, req any) exchange {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(b))
	r.Header.Set("X-Amz-Target", "AmazonAthena."+op)
	r.Header.Set("Content-Type", "application/x-amz-json-1.1")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSIMULATED/20260101/us-east-1/athena/aws4_request")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return exchange{op: op, req: b, status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// session drives every operation the simulator serves through its
// answers, the errors included, as the adapter and its tests do.
func session(t *testing.T) []exchange {
	t.Helper()
	one, null := "1", (*string)(nil)
	s := New(func(q string) ([]string, [][]*string, error) {
		if strings.Contains(q, "missing") {
			return nil, nil, errors.New("TABLE_NOT_FOUND: line 1:15: Table 'awsdatacatalog.db.missing' does not exist")
		}
		return []string{"provider_name", "billed"}, [][]*string{{&one, null}, {&one, &one}, {null, &one}}, nil
	})
	s.PageSize, s.Polls = 2, 1
	var out []exchange
	do := func(op string, req any) exchange {
		x := call(t, s, op, req)
		out = append(out, x)
		return x
	}
	id := func(x exchange) string {
		var v struct{ QueryExecutionId string }
		json.Unmarshal(x.body, &v)
		return v.QueryExecutionId
	}
	ctx := map[string]any{"Database": "focus_db"}
	q := do("StartQueryExecution", map[string]any{"QueryString": "SELECT 1", "WorkGroup": "primary", "QueryExecutionContext": ctx})
	qid := id(q)
	if q.status != http.StatusOK || qid == "" {
		t.Fatalf("StartQueryExecution: %d %s", q.status, q.body)
	}
	do("GetQueryExecution", map[string]any{"QueryExecutionId": qid}) // RUNNING
	do("GetQueryExecution", map[string]any{"QueryExecutionId": qid}) // SUCCEEDED
	var token any
	for range 5 {
		req := map[string]any{"QueryExecutionId": qid, "MaxResults": 1000}
		if token != nil {
			req["NextToken"] = token
		}
		x := do("GetQueryResults", req)
		var v map[string]any
		json.Unmarshal(x.body, &v)
		if token = v["NextToken"]; token == nil {
			break
		}
	}
	// The errors: an unknown workgroup, a query that fails, results asked
	// for too early, an unknown query and a bad token.
	do("StartQueryExecution", map[string]any{"QueryString": "SELECT 1", "WorkGroup": "nowhere", "QueryExecutionContext": ctx})
	failed := id(do("StartQueryExecution", map[string]any{"QueryString": "SELECT * FROM missing", "WorkGroup": "primary", "QueryExecutionContext": ctx}))
	do("GetQueryResults", map[string]any{"QueryExecutionId": failed})
	do("GetQueryExecution", map[string]any{"QueryExecutionId": failed})
	do("GetQueryExecution", map[string]any{"QueryExecutionId": failed}) // FAILED
	do("GetQueryExecution", map[string]any{"QueryExecutionId": "q-404"})
	do("GetQueryResults", map[string]any{"QueryExecutionId": qid, "NextToken": "tok-999"})
	return out
}

// TestContractAthena: every operation athenasim serves answers as
// botocore's Athena model (athena/2017-05-18/service-2.json, vendored
// trimmed in testdata/botocore) says, requests, answers and errors, with
// NextToken paging that ends.
func TestContractAthena(t *testing.T) {
	m := loadModel(t)
	ops := map[string]int{}
	statuses := map[int]int{}
	xs := session(t)
	for _, x := range xs {
		ops[x.op]++
		statuses[x.status]++
		for _, p := range m.checkExchange(x.op, x.req, x.status, x.header, x.body) {
			t.Errorf("%s", p)
		}
	}
	served := []string{"GetQueryExecution", "GetQueryResults", "StartQueryExecution"}
	for _, op := range served {
		if ops[op] == 0 {
			t.Errorf("%s not exercised", op)
		}
	}
	if statuses[http.StatusOK] == 0 || statuses[http.StatusBadRequest] == 0 {
		t.Errorf("statuses %v: want answers and errors", statuses)
	}
	t.Logf("athena contract: %d operations checked against botocore (%v), %d exchanges, statuses %v", len(ops), ops, len(xs), statuses)
}

// TestContractAthenaCatchesCorruption: a corrupted answer of each kind
// fails the contract: an unknown member, a wrong type, a value outside its
// enum, a missing required member, an undeclared error, a wrong status.
func TestContractAthenaCatchesCorruption(t *testing.T) {
	m := loadModel(t)
	var results, execution, failure exchange
	for _, x := range session(t) {
		switch {
		case x.op == "GetQueryResults" && x.status == http.StatusOK && results.body == nil:
			results = x
		case x.op == "GetQueryExecution" && x.status == http.StatusOK && strings.Contains(string(x.body), "SUCCEEDED"):
			execution = x
		case x.op == "StartQueryExecution" && x.status != http.StatusOK:
			failure = x
		}
	}
	if results.body == nil || execution.body == nil || failure.body == nil {
		t.Fatal("the session lacks a result page, a finished execution or an error")
	}
	for _, x := range []exchange{results, execution, failure} {
		if p := m.checkExchange(x.op, x.req, x.status, x.header, x.body); len(p) > 0 {
			t.Fatalf("the uncorrupted %s answer fails: %v", x.op, p)
		}
	}
	for _, c := range []struct {
		name string
		x    exchange
		from string
		to   string
	}{
		{"unknown member", results, `"Rows":`, `"Row":`},
		{"wrong type", results, `"UpdateCount":0`, `"UpdateCount":"0"`},
		{"cell not a string", results, `"VarCharValue":"1"`, `"VarCharValue":1`},
		{"missing required member", results, `"Name":"billed",`, ``},
		{"enum", execution, `"SUCCEEDED"`, `"DONE"`},
		{"timestamp as text", execution, `"Status":{`, `"Status":{"SubmissionDateTime":"2026-01-01T00:00:00Z",`},
		{"undeclared error", failure, `"InvalidRequestException"`, `"ResourceNotFoundException"`},
		{"error member", failure, `"Message":`, `"Reason":`},
	} {
		body := strings.Replace(string(c.x.body), c.from, c.to, 1)
		if body == string(c.x.body) {
			t.Errorf("%s: %q is not in the answer %s", c.name, c.from, c.x.body)
			continue
		}
		header := c.x.header.Clone()
		if c.name == "undeclared error" {
			header.Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		}
		if p := m.checkExchange(c.x.op, c.x.req, c.x.status, header, []byte(body)); len(p) == 0 {
			t.Errorf("%s: the corrupted %s answer passes: %s", c.name, c.x.op, body)
		} else {
			t.Logf("%s: %s", c.name, p[0])
		}
	}
	// A wrong status for a declared error, and a request out of range.
	if p := m.checkExchange(failure.op, failure.req, http.StatusInternalServerError, failure.header, failure.body); len(p) == 0 {
		t.Error("an InvalidRequestException with HTTP 500 passes")
	}
	if p := m.checkExchange("GetQueryResults", []byte(`{"QueryExecutionId":"q-1","MaxResults":1001}`), results.status, results.header, results.body); len(p) == 0 {
		t.Error("a GetQueryResults request with MaxResults 1001 passes")
	}
}
