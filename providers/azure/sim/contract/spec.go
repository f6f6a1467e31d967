// Package contract checks HTTP requests and answers against the published
// Azure API models: the OpenAPI (swagger 2.0) documents of
// azure-rest-api-specs vendored, trimmed, in providers/azure/sim/contract/models,
// and the facts no model states (FACTS.md). The simulator's strict mode
// (sim.Options.Contract) checks every request the adapter sends and every
// answer it gets; the contract tests drive each simulated operation.
//
// Validation follows the Azure conventions the generic OpenAPI validators
// do not know: an x-ms-enum with modelAsString accepts any string, an
// object with declared properties is closed unless additionalProperties
// says otherwise (as Azure's own model validator, oav, reports undeclared
// properties), null is refused unless x-nullable, readOnly properties may
// not be sent, and a definition the trimmed copy left out refuses any
// value, so the copy cannot silently accept what it does not describe.
//
// It is written here rather than on go-openapi/validate or kin-openapi
// (openapi2conv), both available: neither knows x-ms-enum, x-nullable or
// x-ms-skip-url-encoding, both accept undeclared properties, and they would
// need the documents rewritten before every check; the rules above fit in
// two files and say exactly what is checked.
package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/gpufinops/gpufinops/providers/azure/sim/contract/models"
)

// Binding ties one operation of the simulator to the model that describes it.
type Binding struct {
	// Sim is the simulator's operation, "service:Op" (sim.Ops).
	Sim string `json:"sim"`
	// File, Path and Method name the model's operation.
	File   string `json:"file"`
	Path   string `json:"path"`
	Method string `json:"method"`
	// APIVersion is the version the model describes; a request must send it.
	APIVersion string `json:"apiVersion,omitempty"`
	// Errors, when set, is the schema error answers are checked against
	// instead of the operation's default answer; ErrorsWhy says why.
	Errors    string `json:"errors,omitempty"`
	ErrorsWhy string `json:"errorsWhy,omitempty"`
}

// Override replaces a node of a model, with the reason (a FACTS.md row).
type Override struct {
	At     string         `json:"at"`
	Schema map[string]any `json:"schema"`
	Why    string         `json:"why"`
}

// Manifest is models/manifest.json: the operations, the definitions the
// trimmed copy leaves out (Prune), those the source itself lacks (Absent)
// and the overrides of model defects.
type Manifest struct {
	Repository string     `json:"repository"`
	Operations []Binding  `json:"operations"`
	Prune      []string   `json:"prune"`
	Absent     []string   `json:"absent"`
	Overrides  []Override `json:"overrides"`
}

// Spec is the loaded models.
type Spec struct {
	Manifest Manifest
	docs     map[string]map[string]any
	ops      []*operation
	cut      map[string]string // ref → why it refuses every value
}

type operation struct {
	Binding
	node    map[string]any
	re      *regexp.Regexp
	names   []string
	literal int
}

// schema is a node of a document; key is the definition it was reached
// through ("file#/definitions/Name"), when it was.
type schema struct {
	doc, key string
	node     map[string]any
}

var loadEmbedded = sync.OnceValues(func() (*Spec, error) { return Load(models.FS) })

// Models is the embedded models, loaded once.
func Models() (*Spec, error) { return loadEmbedded() }

// Load reads manifest.json and every JSON document under fsys.
func Load(fsys fs.FS) (*Spec, error) {
	s := &Spec{docs: map[string]map[string]any{}, cut: map[string]string{}}
	b, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s.Manifest); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || p == "manifest.json" {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		s.docs[p] = doc
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range s.Manifest.Prune {
		s.cut[r] = "the trimmed copy leaves " + r + " out (models/manifest.json prune): keep it and regenerate to accept it"
	}
	for _, r := range s.Manifest.Absent {
		s.cut[r] = r + " is referenced but not defined by the published model"
	}
	for _, o := range s.Manifest.Overrides {
		if err := s.override(o); err != nil {
			return nil, err
		}
	}
	for _, b := range s.Manifest.Operations {
		op, err := s.bind(b)
		if err != nil {
			return nil, err
		}
		s.ops = append(s.ops, op)
	}
	return s, nil
}

func (s *Spec) override(o Override) error {
	file, ptr, _ := strings.Cut(o.At, "#")
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	node, ok := any(s.docs[file]).(map[string]any)
	for i, t := range toks {
		if !ok {
			break
		}
		if i == len(toks)-1 {
			if _, exists := node[t]; !exists {
				return fmt.Errorf("override %s: no such node", o.At)
			}
			node[t] = o.Schema
			return nil
		}
		node, ok = node[unescape(t)].(map[string]any)
	}
	return fmt.Errorf("override %s: no such node", o.At)
}

func (s *Spec) bind(b Binding) (*operation, error) {
	doc := s.docs[b.File]
	if doc == nil {
		return nil, fmt.Errorf("%s: no model document %s", b.Sim, b.File)
	}
	paths, _ := doc["paths"].(map[string]any)
	item, _ := paths[b.Path].(map[string]any)
	node, _ := item[strings.ToLower(b.Method)].(map[string]any)
	if node == nil {
		return nil, fmt.Errorf("%s: %s has no %s %s", b.Sim, b.File, b.Method, b.Path)
	}
	op := &operation{Binding: b, node: node}
	skip := map[string]bool{}
	for _, p := range s.params(op) {
		if p.node["in"] == "path" && p.node["x-ms-skip-url-encoding"] == true {
			skip[str(p.node["name"])] = true
		}
	}
	var re strings.Builder
	re.WriteString("(?i)^")
	rest := b.Path
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			op.literal += len(rest)
			break
		}
		j := strings.IndexByte(rest, '}')
		re.WriteString(regexp.QuoteMeta(rest[:i]))
		op.literal += i
		name := rest[i+1 : j]
		op.names = append(op.names, name)
		if skip[name] {
			re.WriteString("(.+)")
		} else {
			re.WriteString("([^/]+)")
		}
		rest = rest[j+1:]
	}
	re.WriteString("$")
	var err error
	op.re, err = regexp.Compile(re.String())
	return op, err
}

// params are the operation's parameters, references resolved.
func (s *Spec) params(op *operation) []schema {
	var out []schema
	list, _ := op.node["parameters"].([]any)
	for _, p := range list {
		m, _ := p.(map[string]any)
		sc, err := s.deref(schema{doc: op.File, node: m})
		if err == nil {
			out = append(out, sc)
		}
	}
	return out
}

// match finds the operation of method and path: the most specific
// template (most literal characters) that matches.
func (s *Spec) match(method, p string) (*operation, map[string]string, error) {
	var best *operation
	var vals []string
	for _, op := range s.ops {
		if !strings.EqualFold(op.Method, method) {
			continue
		}
		if m := op.re.FindStringSubmatch(p); m != nil && (best == nil || op.literal > best.literal) {
			best, vals = op, m[1:]
		}
	}
	if best == nil {
		return nil, nil, fmt.Errorf("no operation of the models is %s %s", method, p)
	}
	out := map[string]string{}
	for i, n := range best.names {
		out[n] = vals[i]
	}
	return best, out, nil
}

// Bindings are the manifest's operations.
func (s *Spec) Bindings() []Binding {
	out := make([]Binding, len(s.ops))
	for i, op := range s.ops {
		out[i] = op.Binding
	}
	return out
}

// Refs are the references of every document, resolved to
// "file#/pointer", sorted; Unresolved those that do not resolve and are not
// pruned or absent.
func (s *Spec) Refs() (all, unresolved []string) {
	seen := map[string]bool{}
	for file, doc := range s.docs {
		walk(doc, func(ref string) {
			key := resolveKey(file, ref)
			if seen[key] {
				return
			}
			seen[key] = true
			all = append(all, key)
			if _, err := s.deref(schema{doc: file, node: map[string]any{"$ref": ref}}); err != nil {
				unresolved = append(unresolved, key)
			}
		})
	}
	sort.Strings(all)
	sort.Strings(unresolved)
	return all, unresolved
}

func walk(v any, f func(ref string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			if r, ok := y.(string); ok && k == "$ref" {
				f(r)
				continue
			}
			walk(y, f)
		}
	case []any:
		for _, y := range x {
			walk(y, f)
		}
	}
}

func resolveKey(doc, ref string) string {
	file, ptr, _ := strings.Cut(ref, "#")
	if file == "" {
		file = doc
	} else {
		file = path.Join(path.Dir(doc), file)
	}
	return file + "#" + ptr
}

// deref follows $ref until a node without one; a cut reference becomes a
// node refusing every value.
func (s *Spec) deref(sc schema) (schema, error) {
	for range 32 {
		ref, ok := sc.node["$ref"].(string)
		if !ok {
			return sc, nil
		}
		key := resolveKey(sc.doc, ref)
		if why, ok := s.cut[key]; ok {
			return schema{doc: sc.doc, key: key, node: map[string]any{"x-gpufinops-cut": why}}, nil
		}
		file, ptr, _ := strings.Cut(key, "#")
		d, ok := s.docs[file]
		if !ok {
			return sc, fmt.Errorf("$ref %s: no document %s", ref, file)
		}
		var node any = d
		for _, t := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			if t == "" {
				continue
			}
			m, _ := node.(map[string]any)
			node = m[unescape(t)]
		}
		m, ok := node.(map[string]any)
		if !ok {
			return sc, fmt.Errorf("$ref %s does not resolve", key)
		}
		sc = schema{doc: file, key: key, node: m}
	}
	return sc, fmt.Errorf("$ref loop at %s", sc.key)
}

func unescape(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

func str(v any) string { s, _ := v.(string); return s }
