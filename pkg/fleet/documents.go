package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// singleDocument refuses YAML that holds more than one document ("---" or
// "..." separated): the fleet is one document, and reading only the first
// would silently drop the rest. The error names the line where the second
// document starts. Empty documents (blank, comments only) do not count.
//
// YAML forbids "---" and "..." at the start of a line inside any scalar, so
// a scan of the lines finds every document boundary without parsing.
func singleDocument(data []byte) error {
	content := false // the current or an earlier document has content
	boundary := 0    // line of a "---" seen after content; 0 when none
	ended := false   // a "..." was seen after content
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		l = bytes.TrimRight(l, "\r")
		rest := l
		isStart, isEnd := marker(l, "---"), marker(l, "...")
		switch {
		case isStart:
			if content && boundary == 0 {
				boundary = line
			}
			rest = l[3:]
		case isEnd:
			ended = ended || content
			rest = l[3:]
		}
		if len(l) > 0 && l[0] == '%' && !content {
			continue // a directive such as %YAML 1.2
		}
		t := bytes.TrimSpace(rest)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		switch {
		case isEnd:
			return &Error{Instance: -1, Line: line, Msg: `unexpected data after the document end marker "..."`}
		case boundary > 0:
			return &Error{Instance: -1, Line: boundary, Msg: secondDocument}
		case ended:
			return &Error{Instance: -1, Line: line, Msg: secondDocument}
		}
		content = true
	}
	return nil
}

const secondDocument = "a second YAML document starts here; a fleet file holds one document (merge the instances into one list, or split the file)"

// marker reports whether line starts with the document marker m ("---" or
// "...") followed by a space, a tab or the end of the line.
func marker(line []byte, m string) bool {
	return bytes.HasPrefix(line, []byte(m)) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t')
}

// trailingJSON refuses a YAML file that is JSON with more after the first
// value ({...} {...}), which the YAML reader would otherwise cut short. Data
// that is not JSON is left to the YAML reader.
func trailingJSON(data []byte) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 && rest[0] != '#' {
		line, col := lineCol(data, int64(len(data)-len(rest)+1))
		return &Error{Instance: -1, Line: line, Column: col, Msg: "unexpected data after the document"}
	}
	return nil
}

// nonFinite finds the first .nan or .inf in a YAML document and returns the
// Error naming its line and field; nil when there is none.
func nonFinite(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	var found *Error
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if found != nil || n == nil {
			return
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], joinPath(path, n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			if n.Tag != "!!float" {
				return
			}
			var f float64
			if err := n.Decode(&f); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
				e := locate(path, nil, strconv.Quote(n.Value)+" is not a finite number")
				e.Line = n.Line
				found = e
			}
		}
	}
	walk(&doc, "")
	if found == nil {
		return nil
	}
	return found
}

// isUnsupportedValue reports whether a YAML-to-JSON error is about a number
// JSON cannot hold (NaN, ±Inf).
func isUnsupportedValue(err error) bool {
	return strings.Contains(err.Error(), "unsupported value")
}
