package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by Load's errors for input that is not a report.
var ErrInvalid = errors.New("invalid report")

// ErrUnsupportedVersion is wrapped by Load's errors for a report whose major
// schema version this build cannot read.
var ErrUnsupportedVersion = errors.New("unsupported report version")

// Load reads a JSON report. It accepts every 1.x schema version (fields it
// does not know are ignored) and rejects other majors, invalid or truncated
// JSON, and documents that are not reports. Errors are one line and wrap
// ErrInvalid or ErrUnsupportedVersion.
func Load(rd io.Reader) (*Report, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("reading report: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: the input is empty", ErrInvalid)
	}
	if !json.Valid(trimmed) {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, syntaxError(trimmed))
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: expected a JSON object, got %s", ErrInvalid, jsonKind(trimmed[0]))
	}

	var head struct {
		SchemaVersion json.RawMessage `json:"schemaVersion"`
	}
	if err := json.Unmarshal(trimmed, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: no schemaVersion; is this a %s report?", ErrInvalid, ToolName)
	}
	var version string
	if err := json.Unmarshal(head.SchemaVersion, &version); err != nil {
		return nil, fmt.Errorf("%w: schemaVersion must be a string like %q", ErrInvalid, SchemaVersion)
	}
	if err := checkVersion(version); err != nil {
		return nil, err
	}

	var r Report
	if err := json.Unmarshal(trimmed, &r); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, decodeError(err))
	}
	r.normalize()
	r.tagCurrency()
	return &r, nil
}

// checkVersion accepts "major.minor" with the major of SchemaVersion.
func checkVersion(v string) error {
	major, minor, ok := strings.Cut(v, ".")
	want, _, _ := strings.Cut(SchemaVersion, ".")
	if _, err := strconv.Atoi(minor); !ok || err != nil {
		return fmt.Errorf("%w: schemaVersion %q is not major.minor", ErrInvalid, v)
	}
	if _, err := strconv.Atoi(major); err != nil {
		return fmt.Errorf("%w: schemaVersion %q is not major.minor", ErrInvalid, v)
	}
	if major != want {
		return fmt.Errorf("%w: schema version %s; this %s reads %s.x reports", ErrUnsupportedVersion, v, ToolName, want)
	}
	return nil
}

// normalize turns absent lists and maps into empty ones, as New makes them.
func (r *Report) normalize() {
	if r.Catalog == nil {
		r.Catalog = []CatalogSource{}
	}
	if r.Recommendations == nil {
		r.Recommendations = []Recommendation{}
	}
	if r.Instances == nil {
		r.Instances = []Instance{}
	}
	if r.Warnings == nil {
		r.Warnings = []Warning{}
	}
	if r.Summary.SavingsByKind == nil {
		r.Summary.SavingsByKind = map[string]Money{}
	}
	if r.Policy.Spot.Workloads == nil {
		r.Policy.Spot.Workloads = []string{}
	}
	r.normalizeSections()
	for i := range r.Recommendations {
		rec := &r.Recommendations[i]
		if rec.RiskNotes == nil {
			rec.RiskNotes = []string{}
		}
		ev := &rec.Evidence
		if ev.Metrics == nil {
			ev.Metrics = map[string]float64{}
		}
		if ev.Thresholds == nil {
			ev.Thresholds = map[string]float64{}
		}
		if ev.Prices == nil {
			ev.Prices = []Price{}
		}
		if ev.Notes == nil {
			ev.Notes = []string{}
		}
	}
}

// normalizeSections does the same for the sections added in 1.1, where
// present; absent ones stay nil.
func (r *Report) normalizeSections() {
	if p := r.Policy.Governance; p != nil {
		p.RequiredTags = nonNil(p.RequiredTags)
		p.ModelNameWorkloads = nonNil(p.ModelNameWorkloads)
		p.AllowedValues = nonNil(p.AllowedValues)
		for i := range p.AllowedValues {
			p.AllowedValues[i].Values = nonNil(p.AllowedValues[i].Values)
		}
	}
	if a := r.Allocation; a != nil {
		for _, b := range []*[]CostBucket{&a.ByTeam, &a.ByProject, &a.ByWorkloadType, &a.ByEnvironment, &a.ByProvider} {
			*b = nonNil(*b)
		}
	}
	if m := r.AIMetrics; m != nil {
		m.Instances = nonNil(m.Instances)
		m.TrainingRuns = nonNil(m.TrainingRuns)
		for i := range m.TrainingRuns {
			m.TrainingRuns[i].Instances = nonNil(m.TrainingRuns[i].Instances)
		}
	}
	if a := r.TagAudit; a != nil {
		a.Tags = nonNil(a.Tags)
		a.Violations = nonNil(a.Violations)
		for i := range a.Violations {
			v := &a.Violations[i]
			v.Missing, v.Invalid, v.CaseMismatch = nonNil(v.Missing), nonNil(v.Invalid), nonNil(v.CaseMismatch)
		}
	}
	if s := r.Sharing; s != nil {
		s.Groups = nonNil(s.Groups)
		for i := range s.Groups {
			g := &s.Groups[i]
			g.Hosts, g.Freed = nonNil(g.Hosts), nonNil(g.Freed)
			for j := range g.Hosts {
				g.Hosts[j].Tenants = nonNil(g.Hosts[j].Tenants)
			}
		}
	}
	if c := r.Commitments; c != nil {
		c.Groups = nonNil(c.Groups)
		for i := range c.Groups {
			c.Groups[i].Terms = nonNil(c.Groups[i].Terms)
		}
	}
}

// nonNil is s, or an empty slice for nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// syntaxError describes invalid JSON in one line, with the byte offset.
func syntaxError(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && se.Offset >= int64(len(data)):
		return "the JSON ends early (truncated file?)"
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF) || (err != nil && strings.Contains(err.Error(), "unexpected end of JSON input")):
		return "the JSON ends early (truncated file?)"
	case err != nil:
		return "not valid JSON: " + oneLine(err.Error())
	}
	return "not valid JSON"
}

// decodeError names the field a type mismatch is in.
func decodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: expected %s, got %s", te.Field, te.Type, te.Value)
	}
	return oneLine(strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// LoadPath reads the report at path ("-" is stdin) with Load, opening files
// with open (nil: os.Open). Every error is one line naming the file
// ("standard input" for "-").
func LoadPath(path string, stdin io.Reader, open func(string) (io.ReadCloser, error)) (*Report, error) {
	name, rd := path, stdin
	if path == "-" {
		name = "standard input"
	} else {
		if open == nil {
			open = func(p string) (io.ReadCloser, error) { return os.Open(p) }
		}
		f, err := open(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: cannot read the report: %v", path, err)
		}
		defer f.Close()
		rd = f
	}
	r, err := Load(rd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}
