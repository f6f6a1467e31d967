package bqsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// discovery is the part of a Google discovery document the contract reads.
type discovery struct {
	Revision   string            `json:"revision"`
	Parameters map[string]schema `json:"parameters"`
	Resources  map[string]struct {
		Methods map[string]struct {
			HTTPMethod string            `json:"httpMethod"`
			FlatPath   string            `json:"flatPath"`
			Parameters map[string]schema `json:"parameters"`
			Request    *schema           `json:"request"`
			Response   *schema           `json:"response"`
		} `json:"methods"`
	} `json:"resources"`
	Schemas map[string]*schema `json:"schemas"`
}

type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Enum                 []string           `json:"enum"`
	Properties           map[string]*schema `json:"properties"`
	AdditionalProperties *schema            `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Location             string             `json:"location"`
	Required             bool               `json:"required"`
}

// loadDiscovery reads the BigQuery v2 discovery document of the
// google.golang.org/api module the build uses (the module cache has it
// whenever the GCP adapter builds).
func loadDiscovery(t testing.TB) *discovery {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("google.golang.org/api is not in the module cache (go list: %v): no BigQuery discovery document to check against", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bigquery", "v2", "bigquery-api.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d discovery
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

var digits = regexp.MustCompile(`^-?[0-9]+$`)

// check lists how v (decoded JSON) breaks s: unknown properties, wrong
// JSON types (64-bit integers are decimal strings in Google's JSON), enum
// values.
func (d *discovery) check(s *schema, v any, path string) []string {
	if s.Ref != "" {
		r := d.Schemas[s.Ref]
		if r == nil {
			return []string{path + ": the document has no schema " + s.Ref}
		}
		s = r
	}
	if v == nil {
		return nil
	}
	bad := func(format string, a ...any) []string { return []string{path + ": " + fmt.Sprintf(format, a...)} }
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return bad("an object, got %T", v)
		}
		var out []string
		for _, k := range keys(obj) {
			p, ok := s.Properties[k]
			switch {
			case ok:
				out = append(out, d.check(p, obj[k], path+"."+k)...)
			case s.AdditionalProperties != nil:
				out = append(out, d.check(s.AdditionalProperties, obj[k], path+"."+k)...)
			default:
				out = append(out, fmt.Sprintf("%s.%s: no such property", path, k))
			}
		}
		return out
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return bad("an array, got %T", v)
		}
		var out []string
		for i, e := range arr {
			out = append(out, d.check(s.Items, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case "string":
		str, ok := v.(string)
		if !ok {
			return bad("a string (format %q), got %T %v", s.Format, v, v)
		}
		if (s.Format == "int64" || s.Format == "uint64") && !digits.MatchString(str) {
			return bad("%q is not a %s", str, s.Format)
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return bad("%q is not one of %v", str, s.Enum)
		}
	case "integer":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) || strings.HasPrefix(s.Format, "uint") && n < 0 {
			return bad("an integer (format %q), got %T %v", s.Format, v, v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return bad("a number, got %T", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("a boolean, got %T", v)
		}
	case "any":
	default:
		return bad("type %q, which this checker does not know", s.Type)
	}
	return nil
}

// checkParams checks a request's query parameters against a method's and
// the API's: known names, and values of the parameter's type.
func (d *discovery) checkParams(params map[string]schema, q url.Values, path string) []string {
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			if !yield(k) {
				return
			}
		}
	}) {
		p, ok := params[k]
		if !ok || p.Location != "query" {
			p, ok = d.Parameters[k]
		}
		if !ok {
			out = append(out, fmt.Sprintf("%s?%s: no such parameter", path, k))
			continue
		}
		for _, v := range q[k] {
			var typed any = v
			switch p.Type {
			case "integer":
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					out = append(out, fmt.Sprintf("%s?%s=%s: not an integer", path, k, v))
					continue
				}
				typed = float64(n)
			case "boolean":
				b, err := strconv.ParseBool(v)
				if err != nil {
					out = append(out, fmt.Sprintf("%s?%s=%s: not a boolean", path, k, v))
					continue
				}
				typed = b
			}
			out = append(out, d.check(&p, typed, path+"?"+k)...)
		}
	}
	return out
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rpcCodes are google.rpc.Code names by the HTTP status Google's JSON
// errors give them (https://cloud.google.com/apis/design/errors).
var rpcCodes = map[int][]string{
	400: {"INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE"},
	401: {"UNAUTHENTICATED"}, 403: {"PERMISSION_DENIED"}, 404: {"NOT_FOUND"},
	409: {"ABORTED", "ALREADY_EXISTS"}, 429: {"RESOURCE_EXHAUSTED"}, 499: {"CANCELLED"},
	500: {"INTERNAL", "UNKNOWN", "DATA_LOSS"}, 501: {"UNIMPLEMENTED"}, 503: {"UNAVAILABLE"}, 504: {"DEADLINE_EXCEEDED"},
}

// legacyErrorMembers are the members of an entry of a Google JSON error's
// "errors" list (the v1 error format BigQuery still sends).
var legacyErrorMembers = []string{"domain", "reason", "message", "location", "locationType", "extendedHelp", "sendReport", "debugInfo"}

// checkError checks a Google JSON error body: {"error": {"code": the HTTP
// status, "message", "status": its google.rpc.Code, "errors": [...]}}.
func checkError(status int, body []byte, path string) []string {
	var v struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Error == nil {
		return []string{fmt.Sprintf("%s: HTTP %d without a Google error body: %s", path, status, body)}
	}
	var out []string
	for _, k := range keys(v.Error) {
		switch k {
		case "code":
			if c, _ := v.Error[k].(float64); int(c) != status {
				out = append(out, fmt.Sprintf("%s: error.code %v, HTTP %d", path, v.Error[k], status))
			}
		case "message":
			if _, ok := v.Error[k].(string); !ok {
				out = append(out, path+": error.message is not a string")
			}
		case "status":
			s, _ := v.Error[k].(string)
			if !slices.Contains(rpcCodes[status], s) {
				out = append(out, fmt.Sprintf("%s: error.status %q for HTTP %d, want one of %v", path, s, status, rpcCodes[status]))
			}
		case "errors":
			list, _ := v.Error[k].([]any)
			for i, e := range list {
				obj, _ := e.(map[string]any)
				for _, m := range keys(obj) {
					if !slices.Contains(legacyErrorMembers, m) {
						out = append(out, fmt.Sprintf("%s: error.errors[%d].%s: no such member", path, i, m))
					}
				}
			}
		case "details":
		default:
			out = append(out, fmt.Sprintf("%s: error.%s: no such member", path, k))
		}
	}
	if _, ok := v.Error["status"]; !ok {
		out = append(out, path+": error.status missing")
	}
	return out
}

// exchange is one request to the simulator and its answer.
type exchange struct {
	method string // jobs.query, jobs.getQueryResults
	query  url.Values
	req    []byte
	status int
	body   []byte
}

// checkExchange checks a request and its answer against the method.
func (d *discovery) checkExchange(x exchange) []string {
	m := d.Resources["jobs"].Methods[strings.TrimPrefix(x.method, "jobs.")]
	if m.HTTPMethod == "" {
		return []string{x.method + ": not a method of the document"}
	}
	out := d.checkParams(m.Parameters, x.query, x.method)
	if m.Request != nil {
		var in any
		if err := json.Unmarshal(x.req, &in); err != nil {
			out = append(out, x.method+" request: "+err.Error())
		} else {
			out = append(out, d.check(m.Request, in, x.method+" request")...)
		}
	}
	if x.status != http.StatusOK {
		return append(out, checkError(x.status, x.body, x.method)...)
	}
	var ans any
	if err := json.Unmarshal(x.body, &ans); err != nil {
		return append(out, x.method+": "+err.Error())
	}
	return append(out, d.check(m.Response, ans, x.method)...)
}

// session drives both methods the simulator serves, with pages and
// errors, as cloud.google.com/go/bigquery does.
func session(t *testing.T) []exchange {
	t.Helper()
	one, ts := "1.5", "2026-11-01 00:00:00"
	s := New(func(q string) ([]Column, [][]*string, error) {
		if strings.Contains(q, "missing") {
			return nil, nil, errors.New("Table proj:billing.missing does not exist")
		}
		cols := []Column{{"provider_name", "STRING"}, {"billed", "BIGNUMERIC"}, {"first_start", "TIMESTAMP"}, {"row_count", "INTEGER"}}
		n := "3"
		return cols, [][]*string{{&one, &one, &ts, &n}, {nil, nil, nil, &n}, {&one, &one, &ts, &n}}, nil
	}, "proj")
	s.PageSize = 2
	var out []exchange
	do := func(method, httpMethod, path string, q url.Values, body any) exchange {
		var b []byte
		if body != nil {
			b, _ = json.Marshal(body)
		}
		u := "/bigquery/v2/" + path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		r := httptest.NewRequest(httpMethod, u, bytes.NewReader(b))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		x := exchange{method: method, query: q, req: b, status: w.Code, body: w.Body.Bytes()}
		out = append(out, x)
		return x
	}
	base := url.Values{"alt": {"json"}, "prettyPrint": {"false"}}
	req := map[string]any{"query": "SELECT 1", "useLegacySql": false, "formatOptions": map[string]any{"useInt64Timestamp": true},
		"requestId": "req-1", "location": "US"}
	first := do("jobs.query", http.MethodPost, "projects/proj/queries", base, req)
	var page struct {
		PageToken    string
		JobReference struct{ JobID string }
	}
	if err := json.Unmarshal(first.body, &page); err != nil || first.status != http.StatusOK {
		t.Fatalf("jobs.query: %d %s", first.status, first.body)
	}
	for range 5 {
		if page.PageToken == "" {
			break
		}
		q := url.Values{"alt": {"json"}, "prettyPrint": {"false"}, "pageToken": {page.PageToken}, "location": {"US"},
			"formatOptions.useInt64Timestamp": {"true"}, "maxResults": {"1000"}}
		x := do("jobs.getQueryResults", http.MethodGet, "projects/proj/queries/"+page.JobReference.JobID, q, nil)
		page.PageToken = ""
		json.Unmarshal(x.body, &page)
	}
	// The errors: an unknown project, a query the engine refuses, legacy
	// SQL, an unknown job, a bad page token.
	do("jobs.query", http.MethodPost, "projects/other/queries", base, req)
	bad := map[string]any{"query": "SELECT * FROM missing", "useLegacySql": false}
	do("jobs.query", http.MethodPost, "projects/proj/queries", base, bad)
	do("jobs.query", http.MethodPost, "projects/proj/queries", base, map[string]any{"query": "SELECT 1"})
	do("jobs.getQueryResults", http.MethodGet, "projects/proj/queries/job_404", base, nil)
	do("jobs.getQueryResults", http.MethodGet, "projects/proj/queries/"+page.JobReference.JobID, url.Values{"pageToken": {"p999"}}, nil)
	return out
}

// TestContractBigQuery: both methods bqsim serves answer as the BigQuery v2
// discovery document of the build's google.golang.org/api says (requests,
// query parameters, answers: properties, JSON types, 64-bit integers as
// strings, enums), with pageToken paging that ends; errors are Google's
// JSON error body with a google.rpc.Code status matching the HTTP status.
func TestContractBigQuery(t *testing.T) {
	d := loadDiscovery(t)
	methods := map[string]int{}
	statuses := map[int]int{}
	xs := session(t)
	for _, x := range xs {
		methods[x.method]++
		statuses[x.status]++
		for _, p := range d.checkExchange(x) {
			t.Errorf("%s", p)
		}
	}
	if methods["jobs.query"] == 0 || methods["jobs.getQueryResults"] < 2 || statuses[http.StatusOK] == 0 || statuses[http.StatusBadRequest] == 0 || statuses[http.StatusNotFound] == 0 {
		t.Errorf("methods %v, statuses %v: want both methods, pages, and 400 and 404 errors", methods, statuses)
	}
	t.Logf("bigquery contract: %d methods checked against the discovery document (revision %s): %v, %d exchanges, statuses %v", len(methods), d.Revision, methods, len(xs), statuses)
}

// TestContractBigQueryCatchesCorruption: a corrupted answer of each kind
// fails the contract.
func TestContractBigQueryCatchesCorruption(t *testing.T) {
	d := loadDiscovery(t)
	var query, failure exchange
	for _, x := range session(t) {
		switch {
		case x.method == "jobs.query" && x.status == http.StatusOK:
			query = x
		case x.status == http.StatusNotFound && failure.body == nil:
			failure = x
		}
	}
	if query.body == nil || failure.body == nil {
		t.Fatal("the session lacks an answer or an error")
	}
	for _, x := range []exchange{query, failure} {
		if p := d.checkExchange(x); len(p) > 0 {
			t.Fatalf("the uncorrupted %s answer fails: %v", x.method, p)
		}
	}
	for _, c := range []struct {
		name     string
		x        exchange
		from, to string
	}{
		{"unknown property", query, `"jobComplete":`, `"complete":`},
		{"int64 as a number", query, `"totalRows":"3"`, `"totalRows":3`},
		{"boolean as text", query, `"jobComplete":true`, `"jobComplete":"true"`},
		{"cells not a list", query, `"f":[`, `"f":{"x":[`},
		{"schema field property", query, `"mode":"NULLABLE"`, `"nullable":true`},
		{"error status", failure, `"NOT_FOUND"`, `"Not Found"`},
		{"error code", failure, `"code":404`, `"code":400`},
		{"error member", failure, `"reason":`, `"why":`},
	} {
		body := strings.Replace(string(c.x.body), c.from, c.to, 1)
		if c.name == "cells not a list" {
			body = strings.Replace(body, `]}`, `]}}`, 1)
		}
		if body == string(c.x.body) {
			t.Errorf("%s: %q is not in the answer %s", c.name, c.from, c.x.body)
			continue
		}
		y := c.x
		y.body = []byte(body)
		if p := d.checkExchange(y); len(p) == 0 {
			t.Errorf("%s: the corrupted %s answer passes: %s", c.name, c.x.method, body)
		} else {
			t.Logf("%s: %s", c.name, p[0])
		}
	}
	y := query
	y.query = url.Values{"maxResult": {"10"}}
	if p := d.checkExchange(y); len(p) == 0 {
		t.Error("a misspelt query parameter passes")
	}
}

// TestContractBigQueryWriteError: the errors cloudsim injects through
// WriteError (throttling, outages) are Google's JSON error body too.
func TestContractBigQueryWriteError(t *testing.T) {
	for _, c := range []struct {
		code   int
		reason string
	}{{http.StatusForbidden, "rateLimitExceeded"}, {http.StatusInternalServerError, "backendError"}, {http.StatusTooManyRequests, "rateLimitExceeded"}, {http.StatusServiceUnavailable, "backendError"}} {
		w := httptest.NewRecorder()
		WriteError(w, c.code, c.reason, "simulated")
		if w.Code != c.code {
			t.Errorf("%d %s: HTTP %d", c.code, c.reason, w.Code)
		}
		for _, p := range checkError(w.Code, w.Body.Bytes(), c.reason) {
			t.Error(p)
		}
	}
}
