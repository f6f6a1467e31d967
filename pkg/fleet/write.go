package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The file formats Marshal and Write produce.
const (
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// Write writes the fleet in the file format (FormatJSON or FormatYAML), one
// instance at a time (see Encoder), through a buffer of its own.
func Write(w io.Writer, f *Fleet, format string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := encodeAll(bw, f, format); err != nil {
		return err
	}
	return bw.Flush()
}

// Marshal encodes the fleet in the file format: JSON indented by two spaces, or
// YAML in the same field order with each utilization sample on one line. The
// output is stable and parses back to an equal fleet.
func Marshal(f *Fleet, format string) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeAll(&buf, f, format); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func encodeAll(w io.Writer, f *Fleet, format string) error {
	return EncodeSeq(w, f, func(yield func(Instance) bool) {
		for _, in := range f.Instances {
			if !yield(in) {
				return
			}
		}
	}, format)
}

// EncodeSeq writes the fleet file of head (its instances left out) with the
// instances of all, drawn one at a time: a fleet of any size is never held
// whole (a generated fleet, fleetgen.MixedSeq).
func EncodeSeq(w io.Writer, head *Fleet, all iter.Seq[Instance], format string) error {
	e, err := NewEncoder(w, head, format)
	if err != nil {
		return err
	}
	for in := range all {
		if err := e.Encode(&in); err != nil {
			return err
		}
	}
	return e.Close()
}

// Encoder writes a fleet file an instance at a time, so that a fleet of any
// size (a generated one, a large inventory) is never held whole, neither as
// instances nor as its encoding. The bytes are those of encoding the whole
// document at once: Go's indented JSON, or its YAML restyling (jsonToYAML),
// which depends only on each node and its key, so an instance is the same
// text alone as within the fleet.
type Encoder struct {
	w      io.Writer
	format string
	// head is the document up to its list of instances; empty ends it
	// when there is none.
	head  []byte
	empty string
	// tail follows the list of instances: the commitments, when there are
	// any, and the end of the document.
	tail []byte
	n    int
	buf  bytes.Buffer
}

// emptyInstancesJSON and emptyInstancesYAML end a fleet without instances;
// the header is that document up to them.
const (
	emptyInstancesJSON = "\"instances\": []\n}\n"
	emptyInstancesYAML = "instances: []\n"
)

// NewEncoder starts a fleet file in format with head's version, kind and
// metadata (head's instances are not written: pass each to Encode). Nothing
// is written before the first Encode or Close.
func NewEncoder(w io.Writer, head *Fleet, format string) (*Encoder, error) {
	g := Fleet{APIVersion: head.APIVersion, Kind: head.Kind, Metadata: head.Metadata, Instances: []Instance{}}
	e := &Encoder{w: w, format: format}
	var empty string
	switch format {
	case FormatJSON:
		b, err := e.json(&g, "", "  ")
		if err != nil {
			return nil, err
		}
		e.head, empty = append(bytes.Clone(b), '\n'), emptyInstancesJSON
	case FormatYAML:
		b, err := e.json(&g, "", "")
		if err != nil {
			return nil, err
		}
		if b, err = jsonToYAML(b); err != nil {
			return nil, err
		}
		e.head, empty = b, emptyInstancesYAML
	default:
		return nil, fmt.Errorf("unknown fleet format %q; want %s or %s", format, FormatJSON, FormatYAML)
	}
	if !bytes.HasSuffix(e.head, []byte(empty)) {
		return nil, fmt.Errorf("fleet header does not end in its instance list: %q", e.head)
	}
	e.head, e.empty = e.head[:len(e.head)-len(empty)], empty
	if len(head.Commitments) > 0 {
		if err := e.commitmentsTail(&g, head.Commitments); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// commitmentsTail encodes the document g with commitments and keeps what
// follows its (empty) instance list: the commitments section, written
// after the instances as the whole-document encoding orders the fields.
func (e *Encoder) commitmentsTail(g *Fleet, commitments []Held) error {
	g.Commitments = commitments
	var b []byte
	var err error
	if e.format == FormatJSON {
		b, err = e.json(g, "", "  ")
	} else if b, err = e.json(g, "", ""); err == nil {
		b, err = jsonToYAML(b)
	}
	if err != nil {
		return err
	}
	b = bytes.Clone(b)
	mark := "instances: []\n"
	if e.format == FormatJSON {
		b, mark = append(b, '\n'), "\"instances\": [],\n"
	}
	_, after, ok := bytes.Cut(b, []byte(mark))
	if !ok {
		return fmt.Errorf("fleet document has no instance list before its commitments: %q", b)
	}
	if e.format == FormatJSON {
		e.empty = mark[:len(mark)-2] + ",\n" + string(after)
		e.tail = append([]byte("\n  ],\n"), after...)
	} else {
		e.empty = mark + string(after)
		e.tail = after
	}
	return nil
}

// json encodes v as the whole-document encoder does (no HTML escaping),
// indented from prefix, without the encoder's final newline.
func (e *Encoder) json(v any, prefix, indent string) ([]byte, error) {
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent(prefix, indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), nil
}

// Encode writes one instance.
func (e *Encoder) Encode(in *Instance) error {
	var lead string
	var body []byte
	switch e.format {
	case FormatJSON:
		b, err := e.json(in, "    ", "  ")
		if err != nil {
			return err
		}
		lead, body = ",\n    ", b
		if e.n == 0 {
			lead = "\"instances\": [\n    "
		}
	default:
		// The instance as the only item of the fleet's list: the item's
		// lines are the same as among others.
		b, err := e.json(struct {
			Instances [1]*Instance `json:"instances"`
		}{[1]*Instance{in}}, "", "")
		if err != nil {
			return err
		}
		if body, err = jsonToYAML(b); err != nil {
			return err
		}
		if e.n > 0 {
			body = body[len("instances:\n"):]
		}
	}
	if e.n == 0 {
		if _, err := e.w.Write(e.head); err != nil {
			return err
		}
	}
	e.n++
	if _, err := io.WriteString(e.w, lead); err != nil {
		return err
	}
	_, err := e.w.Write(body)
	return err
}

// Close ends the document. It does not close the underlying writer.
func (e *Encoder) Close() error {
	var err error
	switch {
	case e.n == 0:
		if _, err = e.w.Write(e.head); err == nil {
			_, err = io.WriteString(e.w, e.empty)
		}
	case e.tail != nil:
		_, err = e.w.Write(e.tail)
	case e.format == FormatJSON:
		_, err = io.WriteString(e.w, "\n  ]\n}\n")
	}
	return err
}

// jsonToYAML re-encodes JSON as block-style YAML, keeping the key order.
func jsonToYAML(j []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, err
	}
	styleYAML(&doc, "", false)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// styleYAML replaces the JSON styles: block style for the structure, flow
// style for small leaf collections (a utilization figure, a GPU, a workload)
// and for each utilization sample, and quotes where a YAML 1.1 reader (which
// is what Parse uses) would read a string as something else. key is the
// mapping key n is the value of.
func styleYAML(n *yaml.Node, key string, flow bool) {
	if n.Kind == yaml.ScalarNode {
		n.Style = 0
		if n.Tag == "!!str" && !plainSafe(n.Value) {
			n.Style = yaml.DoubleQuotedStyle
		}
		return
	}
	n.Style = 0
	if flow || (n.Kind != yaml.DocumentNode && isLeaf(n) && key != "tags" && key != "metadata") {
		n.Style = yaml.FlowStyle
	}
	for i, c := range n.Content {
		switch {
		case n.Kind == yaml.MappingNode && i%2 == 1:
			k := n.Content[i-1].Value
			if k == "samples" && !flow && c.Kind == yaml.SequenceNode {
				c.Style = 0
				for _, s := range c.Content {
					styleYAML(s, "", true)
				}
				continue
			}
			styleYAML(c, k, flow)
		default:
			styleYAML(c, "", flow)
		}
	}
}

// isLeaf reports whether a collection holds only scalars.
func isLeaf(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

var plainString = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 ._/+-]*$`)

// plainSafe reports whether a string may be written unquoted and still read
// back as that string by YAML 1.1 and 1.2 readers alike.
func plainSafe(s string) bool {
	if !plainString.MatchString(s) || strings.HasSuffix(s, " ") {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

// MarshalJSON writes one value as a number and several as a list.
func (p PerGPU) MarshalJSON() ([]byte, error) {
	if len(p) == 1 {
		return json.Marshal(p[0])
	}
	return json.Marshal([]float64(p))
}

// MarshalJSON writes hourlyRate as a JSON number, as the file format has it.
func (cm Commitment) MarshalJSON() ([]byte, error) {
	type plain Commitment
	out := struct {
		plain
		HourlyRate json.Number `json:"hourlyRate,omitempty"`
	}{plain: plain(cm)}
	if cm.HourlyRate != nil {
		out.HourlyRate = json.Number(cm.HourlyRate.String())
	}
	return json.Marshal(out)
}

// MarshalJSON writes hourlyCommitment and hourlyRate as JSON numbers, as the
// file format has them.
func (h Held) MarshalJSON() ([]byte, error) {
	type plain Held
	out := struct {
		plain
		HourlyCommitment json.Number `json:"hourlyCommitment,omitempty"`
		HourlyRate       json.Number `json:"hourlyRate,omitempty"`
	}{plain: plain(h)}
	if h.HourlyCommitment != nil {
		out.HourlyCommitment = json.Number(h.HourlyCommitment.String())
	}
	if h.HourlyRate != nil {
		out.HourlyRate = json.Number(h.HourlyRate.String())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MarshalJSON writes the instance in the file format, with hourlyPrice as a
// JSON number rather than the decimal package's quoted string.
func (in Instance) MarshalJSON() ([]byte, error) {
	type plain Instance
	out := struct {
		plain
		HourlyPrice json.Number `json:"hourlyPrice,omitempty"`
	}{plain: plain(in)}
	if in.HourlyPrice != nil {
		out.HourlyPrice = json.Number(in.HourlyPrice.String())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
