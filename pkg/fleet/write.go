package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The file formats Marshal and Write produce.
const (
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// Write writes the fleet in the file format (FormatJSON or FormatYAML).
func Write(w io.Writer, f *Fleet, format string) error {
	b, err := Marshal(f, format)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Marshal encodes the fleet in the file format: JSON indented by two spaces, or
// YAML in the same field order with each utilization sample on one line. The
// output is stable and parses back to an equal fleet.
func Marshal(f *Fleet, format string) ([]byte, error) {
	g := *f
	if g.Instances == nil {
		g.Instances = []Instance{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	switch format {
	case FormatJSON:
		enc.SetIndent("", "  ")
		if err := enc.Encode(&g); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case FormatYAML:
		if err := enc.Encode(&g); err != nil {
			return nil, err
		}
		return jsonToYAML(buf.Bytes())
	}
	return nil, fmt.Errorf("unknown fleet format %q; want %s or %s", format, FormatJSON, FormatYAML)
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
