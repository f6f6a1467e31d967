package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Helpers shared by the simulator's EC2, STS, Pricing and Savings Plans
// handlers: deterministic IDs, query-protocol lists and filters, wildcard
// matching and response writers. Page tokens come from simkit.

// awsTime is how AWS writes timestamps in XML (RFC 3339, milliseconds, UTC).
const awsTime = "2006-01-02T15:04:05.000Z"

var requestSeq atomic.Uint64

// newRequestID returns a request ID shaped like AWS's (a UUID).
func newRequestID() string {
	h := sha256.Sum256(binary.BigEndian.AppendUint64(nil, requestSeq.Add(1)))
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// digest hashes parts into a stable byte string.
func digest(parts ...string) []byte { return simkit.Digest(parts...) }

// hexID is a stable lower-case hex ID of n characters (n ≤ 64).
func hexID(n int, parts ...string) string {
	return hex.EncodeToString(digest(parts...))[:n]
}

// upperID is a stable ID of n characters from A–Z and 0–9.
func upperID(n int, parts ...string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	d := digest(parts...)
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[int(d[i%len(d)]+byte(i/len(d)))%len(alphabet)]
	}
	return string(out)
}

// uuidID is a stable UUID-shaped ID.
func uuidID(parts ...string) string {
	x := hexID(32, parts...)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// unitFraction maps parts to a stable number in [0, 1).
func unitFraction(parts ...string) float64 {
	return float64(binary.BigEndian.Uint64(digest(parts...))>>11) / (1 << 53)
}

// formFingerprint identifies a query-protocol request apart from its paging
// parameters.
func formFingerprint(form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		if k == "NextToken" || k == "MaxResults" {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strings.Join(form[k], ",") + "&")
	}
	return hexID(16, b.String())
}

// jsonFingerprint identifies a JSON request apart from its paging fields.
func jsonFingerprint(v any) string {
	b, _ := json.Marshal(v)
	return hexID(16, string(b))
}

// listParam reads a flattened query list: Name.1, Name.2, … in index order.
func listParam(form url.Values, name string) []string {
	type item struct {
		i int
		v string
	}
	var items []item
	prefix := name + "."
	for k, vs := range form {
		if !strings.HasPrefix(k, prefix) || len(vs) == 0 {
			continue
		}
		i, err := strconv.Atoi(k[len(prefix):])
		if err != nil {
			continue
		}
		items = append(items, item{i, vs[0]})
	}
	sort.Slice(items, func(a, b int) bool { return items[a].i < items[b].i })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.v
	}
	return out
}

// queryFilter is one EC2 Filter.N: a name and the values any of which match.
type queryFilter struct {
	name   string
	values []string
}

// parseFilters reads Filter.N.Name and Filter.N.Value.M.
func parseFilters(form url.Values) []queryFilter {
	idx := map[int]bool{}
	for k := range form {
		if !strings.HasPrefix(k, "Filter.") {
			continue
		}
		rest := strings.TrimPrefix(k, "Filter.")
		n, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(n); err == nil {
			idx[i] = true
		}
	}
	var ns []int
	for i := range idx {
		ns = append(ns, i)
	}
	sort.Ints(ns)
	var out []queryFilter
	for _, i := range ns {
		p := fmt.Sprintf("Filter.%d.", i)
		out = append(out, queryFilter{name: form.Get(p + "Name"), values: listParam(form, p+"Value")})
	}
	return out
}

// matchAny reports whether any of the candidate values matches any of the
// filter's patterns.
func (f queryFilter) matchAny(candidates ...string) bool {
	for _, c := range candidates {
		for _, p := range f.values {
			if wildcard(p, c) {
				return true
			}
		}
	}
	return false
}

// wildcard matches s against an EC2 filter pattern: * is any run of
// characters, ? is one character; matching is case-sensitive.
func wildcard(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti := 0, 0
	star, mark := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// intParam reads an optional integer parameter.
func intParam(form url.Values, name string) (v int, set bool, err error) {
	s := form.Get(name)
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.Atoi(s)
	if err != nil {
		return 0, true, fmt.Errorf("invalid value %q for parameter %s", s, name)
	}
	return v, true, nil
}

// timeParam reads an optional ISO 8601 timestamp parameter.
func timeParam(form url.Values, name string) (time.Time, bool, error) {
	s := form.Get(name)
	if s == "" {
		return time.Time{}, false, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true, nil
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Unix(0, int64(f*1e9)).UTC(), true, nil
	}
	return time.Time{}, true, fmt.Errorf("invalid value %q for parameter %s", s, name)
}

// boolParam reads an optional boolean parameter.
func boolParam(form url.Values, name string) bool {
	return strings.EqualFold(form.Get(name), "true")
}

// writeXMLResponse writes a query-protocol answer: the <OpResponse> root in
// the service's namespace with body's fields inside.
func writeXMLResponse(w http.ResponseWriter, op, namespace string, body any) {
	start := xml.StartElement{
		Name: xml.Name{Local: op + "Response"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: namespace}},
	}
	var b strings.Builder
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	if err := enc.EncodeElement(body, start); err != nil {
		http.Error(w, "gpufinops aws sim: encoding "+op+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	io.WriteString(w, b.String())
}

// writeJSONResponse writes a JSON answer with the given content type.
func writeJSONResponse(w http.ResponseWriter, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "gpufinops aws sim: encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Write(b)
}
