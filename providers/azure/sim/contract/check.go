package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// MaxBatchResourceIDs is the most resource IDs one metrics:getBatch call
// takes (FACTS.md); the model's ResourceIdList has no maxItems.
const MaxBatchResourceIDs = 50

// Checker checks requests and answers against a Spec. It remembers the
// next-page links of the answers it checked: a client follows them as
// given, so a request to one is not refused for the server's own paging
// parameters ($skiptoken).
type Checker struct {
	spec *Spec
	mu   sync.Mutex
	next map[string]bool
}

// New is a Checker of the embedded models; it panics if they do not load
// (a broken vendored copy is a build error, not a runtime condition).
func New() *Checker {
	s, err := Models()
	if err != nil {
		panic("azure contract models: " + err.Error())
	}
	return NewChecker(s)
}

// NewChecker is a Checker of s.
func NewChecker(s *Spec) *Checker { return &Checker{spec: s, next: map[string]bool{}} }

// Spec is the checker's models.
func (c *Checker) Spec() *Spec { return c.spec }

// Operation is the simulator operation ("service:Op") the models bind to
// method and path, or "" when none does.
func (c *Checker) Operation(method, p string) string {
	op, _, err := c.spec.match(method, p)
	if err != nil {
		return ""
	}
	return op.Sim
}

// CheckRequest checks a request: its operation, path and query parameters
// (names, types, enums, formats, limits, the model's api-version), its
// body, and the request facts no model states.
func (c *Checker) CheckRequest(r *http.Request, body []byte) error {
	op, pathVals, err := c.spec.match(r.Method, r.URL.Path)
	if err != nil {
		return err
	}
	v := &validator{s: c.spec, request: true}
	q := r.URL.Query()
	followed := c.followed(r.URL)
	known := map[string]bool{}
	var bodyParam *schema
	for _, p := range c.spec.params(op) {
		pname := str(p.node["name"])
		switch p.node["in"] {
		case "path":
			v.param(p, pathVals[pname], "path "+pname)
		case "query":
			known[pname] = true
			vals, ok := q[pname]
			switch {
			case !ok && p.node["required"] == true:
				v.errorf("query "+pname, "required by the model, not sent")
			case len(vals) > 1 && p.node["collectionFormat"] != "multi":
				v.errorf("query "+pname, "sent %d times", len(vals))
			case ok:
				v.param(p, vals[0], "query "+pname)
			}
		case "header":
			if p.node["required"] == true && r.Header.Get(pname) == "" {
				v.errorf("header "+pname, "required by the model, not sent")
			}
		case "body":
			bp := p
			bodyParam = &bp
		}
	}
	if !followed {
		for _, k := range sortedKeys(q) {
			if !known[k] {
				v.errorf("query "+k, "not a parameter of %s in the model", op.operationID())
			}
		}
	}
	if op.APIVersion != "" && q.Get("api-version") != "" && q.Get("api-version") != op.APIVersion {
		v.errorf("query api-version", "%q, but the model describes %s", q.Get("api-version"), op.APIVersion)
	}
	switch trimmed := bytes.TrimSpace(body); {
	case bodyParam == nil && len(trimmed) > 0:
		v.errorf("body", "%s takes no body in the model", op.operationID())
	case bodyParam != nil && len(trimmed) == 0 && bodyParam.node["required"] == true:
		v.errorf("body", "required by the model, not sent")
	case bodyParam != nil && len(trimmed) > 0:
		val, err := decode(trimmed)
		if err != nil {
			v.errorf("body", "not JSON: %v", err)
			break
		}
		sch, _ := bodyParam.node["schema"].(map[string]any)
		v.check(schema{doc: bodyParam.doc, node: sch}, val, "body")
		requestFacts(v, op, val)
	}
	return v.err(op, "request")
}

func (c *Checker) followed(u *url.URL) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next[u.Path+"?"+u.RawQuery]
}

// requestFacts are the request limits no model states (FACTS.md).
func requestFacts(v *validator, op *operation, body any) {
	if op.Sim == "monitor:MetricsBatch" {
		m, _ := body.(map[string]any)
		if ids, _ := m["resourceids"].([]any); len(ids) > MaxBatchResourceIDs {
			v.errorf("body.resourceids", "%d resource IDs; metrics:getBatch takes at most %d", len(ids), MaxBatchResourceIDs)
		}
	}
}

// param checks one path or query value against its parameter.
func (v *validator) param(p schema, raw, at string) {
	if p.node["type"] == "array" {
		items, _ := p.node["items"].(map[string]any)
		sep := map[any]string{"csv": ",", "ssv": " ", "tsv": "\t", "pipes": "|"}[p.node["collectionFormat"]]
		if sep == "" {
			sep = ","
		}
		for i, part := range strings.Split(raw, sep) {
			v.check(schema{doc: p.doc, node: items}, scalar(items, part), fmt.Sprintf("%s[%d]", at, i))
		}
		return
	}
	v.check(p, scalar(p.node, raw), at)
}

// scalar is a raw path or query value as the JSON value its type reads.
func scalar(n map[string]any, raw string) any {
	switch n["type"] {
	case "integer", "number":
		return json.Number(raw)
	case "boolean":
		switch raw {
		case "true":
			return true
		case "false":
			return false
		}
	}
	return raw
}

// CheckResponse checks an answer to r (whose body was reqBody): its status
// against the operation's responses, its body against the schema (error
// answers against the binding's Errors schema where the model's is
// broken), and the answer facts: ARM's error envelope, throttling headers,
// the long-running operation headers and paging links and counts.
func (c *Checker) CheckResponse(r *http.Request, reqBody []byte, status int, h http.Header, body []byte) error {
	op, _, err := c.spec.match(r.Method, r.URL.Path)
	if err != nil {
		return err
	}
	v := &validator{s: c.spec}
	responses, _ := op.node["responses"].(map[string]any)
	resp, ok := responses[strconv.Itoa(status)].(map[string]any)
	if !ok {
		resp, ok = responses["default"].(map[string]any)
		if !ok || status < 400 {
			v.errorf("status", "%d is not an answer of %s in the model", status, op.operationID())
			return v.err(op, "answer")
		}
	}
	sch, _ := resp["schema"].(map[string]any)
	sc := schema{doc: op.File, node: sch}
	if status >= 400 && op.Errors != "" {
		sc = schema{doc: op.File, node: map[string]any{"$ref": relRef(op.File, op.Errors)}}
	}
	trimmed := bytes.TrimSpace(body)
	var val any
	switch {
	case sc.node == nil && len(trimmed) > 0:
		v.errorf("body", "the model's %d answer has no body", status)
	case sc.node != nil && len(trimmed) == 0:
		v.errorf("body", "empty; the model's %d answer has one", status)
	case sc.node != nil:
		val, err = decode(trimmed)
		if err != nil {
			v.errorf("body", "not JSON: %v", err)
			break
		}
		v.check(sc, val, "body")
	}
	c.answerFacts(v, op, r, reqBody, status, h, val)
	return v.err(op, "answer")
}

// relRef is a reference from doc to key ("file#/pointer").
func relRef(doc, key string) string {
	file, ptr, _ := strings.Cut(key, "#")
	up := strings.Count(doc, "/")
	return strings.Repeat("../", up) + file + "#" + ptr
}

var reResetsAfter = regexp.MustCompile(`^\d{2}:\d{2}:\d{2}$`)

// answerFacts are the answer rules no model states (FACTS.md).
func (c *Checker) answerFacts(v *validator, op *operation, r *http.Request, reqBody []byte, status int, h http.Header, val any) {
	if status >= 400 {
		m, _ := val.(map[string]any)
		e, _ := m["error"].(map[string]any)
		if code, _ := e["code"].(string); code == "" {
			v.errorf("body.error.code", "an ARM error answer must name its code")
		}
		if _, ok := e["message"].(string); !ok {
			v.errorf("body.error.message", "an ARM error answer must carry a message")
		}
	}
	if status == http.StatusTooManyRequests {
		if !positive(h.Get("Retry-After")) && !positive(h.Get("retry-after-ms")) && !positive(h.Get("x-ms-retry-after-ms")) {
			v.errorf("header Retry-After", "a 429 must say when to retry (Retry-After in whole seconds, at least 1), got %q", h.Get("Retry-After"))
		}
		switch {
		case op.Sim == "resourcegraph:Resources":
			if h.Get("x-ms-user-quota-remaining") == "" || !reResetsAfter.MatchString(h.Get("x-ms-user-quota-resets-after")) {
				v.errorf("header x-ms-user-quota-*", "a throttled Resource Graph query carries x-ms-user-quota-remaining and x-ms-user-quota-resets-after (hh:mm:ss)")
			}
		case computeThrottle(val):
			if len(h.Values("x-ms-ratelimit-remaining-resource")) == 0 {
				v.errorf("header x-ms-ratelimit-remaining-resource", "a Compute throttle (OperationNotAllowed, detail TooManyRequests) names its policies in x-ms-ratelimit-remaining-resource")
			}
		}
	}
	if status == http.StatusAccepted && op.node["x-ms-long-running-operation"] == true {
		if !absolute(h.Get("Azure-AsyncOperation")) && !absolute(h.Get("Location")) {
			v.errorf("header Azure-AsyncOperation", "a 202 of a long-running operation carries an absolute Azure-AsyncOperation or Location URL")
		}
	}
	if status != http.StatusOK {
		return
	}
	m, _ := val.(map[string]any)
	if pg, ok := op.node["x-ms-pageable"].(map[string]any); ok {
		if name := str(pg["nextLinkName"]); name != "" {
			if link := str(m[name]); link != "" {
				c.link(v, r, "body."+name, link)
			}
		}
	}
	switch op.Sim {
	case "resourcegraph:Resources":
		graphFacts(v, reqBody, m)
	case "prices:RetailPrices":
		items, _ := m["Items"].([]any)
		if n, _ := m["Count"].(json.Number); n.String() != strconv.Itoa(len(items)) {
			v.errorf("body.Count", "%s, but the page has %d items", n, len(items))
		}
		if link := str(m["NextPageLink"]); link != "" {
			c.link(v, r, "body.NextPageLink", link)
		}
	}
}

// computeThrottle is the Compute resource provider's throttling answer:
// OperationNotAllowed with a TooManyRequests detail naming the policy.
func computeThrottle(val any) bool {
	m, _ := val.(map[string]any)
	e, _ := m["error"].(map[string]any)
	if e["code"] != "OperationNotAllowed" {
		return false
	}
	details, _ := e["details"].([]any)
	for _, d := range details {
		if dm, _ := d.(map[string]any); dm["code"] == "TooManyRequests" {
			return true
		}
	}
	return false
}

// graphFacts: data is an array of rows with resultFormat objectArray (the
// default) and a table otherwise; count is the rows of the page, at most
// totalRecords; a $skipToken comes only with rows.
func graphFacts(v *validator, reqBody []byte, m map[string]any) {
	var req struct {
		Options struct {
			ResultFormat string `json:"resultFormat"`
		} `json:"options"`
	}
	_ = json.Unmarshal(reqBody, &req)
	var rows int
	switch d := m["data"].(type) {
	case []any:
		rows = len(d)
		if req.Options.ResultFormat == "table" {
			v.errorf("body.data", "an array, but the query asked for resultFormat table")
		}
	case map[string]any:
		r, _ := d["rows"].([]any)
		rows = len(r)
		if req.Options.ResultFormat != "table" {
			v.errorf("body.data", "a table, but the query asked for objectArray rows")
		}
	default:
		v.errorf("body.data", "neither rows nor a table")
	}
	count, _ := strconv.Atoi(fmt.Sprint(m["count"]))
	total, _ := strconv.Atoi(fmt.Sprint(m["totalRecords"]))
	if count != rows {
		v.errorf("body.count", "%d, but the page has %d rows", count, rows)
	}
	if count > total {
		v.errorf("body.count", "%d rows of %d records", count, total)
	}
	if _, ok := m["$skipToken"]; ok && count == 0 {
		v.errorf("body.$skipToken", "a continuation token on a page without rows")
	}
}

// link checks a next-page link: an absolute URL on the request's host and
// path, with the request's api-version; it is remembered as a URL a client
// may follow as given.
func (c *Checker) link(v *validator, r *http.Request, at, link string) {
	u, err := url.Parse(link)
	if err != nil || !u.IsAbs() {
		v.errorf(at, "%q is not an absolute URL", link)
		return
	}
	if r.Host != "" && u.Host != r.Host {
		v.errorf(at, "%q leaves the host %s", link, r.Host)
	}
	if !strings.EqualFold(u.Path, r.URL.Path) {
		v.errorf(at, "%q is not a page of %s", link, r.URL.Path)
	}
	if want := r.URL.Query().Get("api-version"); u.Query().Get("api-version") != want {
		v.errorf(at, "%q drops the request's api-version %q", link, want)
	}
	c.mu.Lock()
	c.next[u.Path+"?"+u.RawQuery] = true
	c.mu.Unlock()
}

func positive(s string) bool {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return err == nil && n >= 1
}

func absolute(s string) bool {
	u, err := url.Parse(s)
	return s != "" && err == nil && u.IsAbs()
}

func (op *operation) operationID() string {
	if id := str(op.node["operationId"]); id != "" {
		return id
	}
	return op.Method + " " + op.Path
}

func (v *validator) err(op *operation, what string) error {
	if len(v.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s (%s, %s): %w", op.operationID(), what, op.Sim, op.File, errors.New(strings.Join(v.errs, "; ")))
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func sortedKeys(q url.Values) []string {
	out := make([]string, 0, len(q))
	for k := range q {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
