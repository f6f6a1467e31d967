package fleet

import (
	"bytes"
	"encoding/json"

	"sigs.k8s.io/yaml"
)

// The streaming reading of YAML fleet files. Converted whole, a YAML
// document of 100,000 instances became one generic tree of some 5 GB before
// the first instance was checked. streamYAML reads such a file the way
// decodeLarge reads JSON: the top-level members apart from the instances
// (the header) converted on their own, then each element of the instances
// list converted to JSON and decoded before the next is read.
//
// It takes only the layout a split by lines cannot get wrong: a block
// mapping at the top level whose keys are plain words at column 0, with
// `instances:` on a line of its own followed by a block sequence, each
// element starting with "- " at the sequence's indentation. Everything else
// (flow style at the top, directives, tabs, a carriage return alone, an instances
// list given inline, a key given twice) is left to the whole-tree reader,
// and so is any input the pieces do not convert without error: a syntax
// error, an alias to an anchor in another piece, a number JSON cannot hold.
// The whole-tree reader then reports the error exactly as it always has.
// A cut that fell inside a quoted scalar or flow collection leaves the piece
// before it unterminated, which is such an error, so a piece that converts
// means the same on its own as in the document.
//
// Each element is converted by yamlItem where it is in the plain subset
// fleet files are written in (block mappings and sequences, one-line flow
// collections, plain, quoted and numeric scalars), and by the YAML library
// otherwise. Errors in values are the ones decodeLarge reports for the
// document converted whole: same messages, same order (syntax first, then
// header, then the first bad instance, then Validate).

// streamYAML reads a YAML fleet piecewise; ok is false when the whole-tree
// reader must read it (the result then means nothing). The fleet is not yet
// defaulted or validated.
func streamYAML(data []byte) (f *Fleet, err error, ok bool) {
	return streamYAMLWith(data, &yamlConverter{})
}

// streamYAMLWith is streamYAML converting with conv, which counts the
// elements the library converted.
func streamYAMLWith(data []byte, conv *yamlConverter) (f *Fleet, err error, ok bool) {
	sp, ok := splitYAML(data)
	if !ok {
		return nil, nil, false
	}
	// The part before the instances must stand on its own (no construct
	// runs on into them); the header is that part and the one after.
	if _, err := yaml.YAMLToJSONStrict(sp.before); err != nil {
		return nil, nil, false
	}
	head := make([]byte, 0, len(sp.before)+len(sp.after))
	head = append(append(head, sp.before...), sp.after...)
	hj, err := yaml.YAMLToJSONStrict(head)
	if err != nil {
		return nil, nil, false
	}
	root, isMap := decodeHeaderJSON(hj)
	if !isMap {
		return nil, nil, false
	}
	if _, dup := root["instances"]; dup {
		return nil, nil, false
	}
	root["instances"] = placeholderInstances
	// The first error in a value is kept while the rest is still
	// converted: a syntax error anywhere comes before it.
	var first error
	if f, first = headerOf(root); first != nil {
		f = nil
	}
	var out []Instance
	if f != nil {
		out = make([]Instance, 0, len(sp.items))
	}
	d := newInstanceDecoder()
	for i, it := range sp.items {
		raw, ok := conv.item(data[it[0]:it[1]], it[2])
		if !ok {
			return nil, nil, false
		}
		if first != nil {
			continue
		}
		in, err := d.decode(raw, i)
		if err != nil {
			first, out = err, nil
			continue
		}
		out = append(out, in)
	}
	if first != nil {
		return nil, first, true
	}
	f.Instances = out
	return f, nil, true
}

// decodeHeaderJSON decodes the header's JSON into its members; isMap is
// false when it is not a mapping.
func decodeHeaderJSON(j []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// yamlSplit is a YAML fleet cut at line boundaries: the text before the
// instances key, the text after its list, and the list's elements as
// [start, end, indentation] in the data.
type yamlSplit struct {
	before, after []byte
	items         [][3]int
}

// splitYAML cuts data into its header and elements; ok is false when data
// is not in the layout streamYAML takes.
func splitYAML(data []byte) (sp yamlSplit, ok bool) {
	if !crlfOnly(data) {
		return sp, false // a carriage return alone is a line break to YAML
	}
	const (
		beforeList = iota
		listStart  // after "instances:", before its first element
		inList
		afterList
	)
	state := beforeList
	instancesAt, afterAt := -1, -1
	seqIndent := -1
	itemStart := -1
	content := false // a line other than blanks and comments was seen
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += pos
			next = end + 1
		}
		line := bytes.TrimSuffix(data[pos:end], []byte("\r"))
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		text := line[indent:]
		if len(text) > 0 && text[0] == '\t' {
			return sp, false // a tab where YAML wants spaces: the library says what it means
		}
		if blankOrComment(text) {
			pos = next
			continue
		}
		first := !content
		content = true
		switch state {
		case beforeList:
			if indent > 0 && first {
				return sp, false // the top level is indented
			}
			if indent == 0 {
				if pos == 0 && isDocStart(line) {
					content = false
					break
				}
				if isInstancesKey(line) {
					state, instancesAt = listStart, pos
					break
				}
				if !isPlainKeyLine(line) {
					return sp, false
				}
			}
		case listStart:
			if !isEntry(text) {
				return sp, false // a null or inline value: the whole-tree reader names it
			}
			seqIndent, itemStart, state = indent, pos, inList
		case inList:
			switch {
			case indent > seqIndent:
			case indent == seqIndent && isEntry(text):
				sp.items = append(sp.items, [3]int{itemStart, pos, seqIndent})
				itemStart = pos
			case indent == 0:
				if !isPlainKeyLine(line) || isInstancesKey(line) {
					return sp, false
				}
				sp.items = append(sp.items, [3]int{itemStart, pos, seqIndent})
				state, afterAt = afterList, pos
			default:
				return sp, false
			}
		case afterList:
			if indent == 0 && (!isPlainKeyLine(line) || isInstancesKey(line)) {
				return sp, false
			}
		}
		pos = next
	}
	switch state {
	case inList:
		sp.items = append(sp.items, [3]int{itemStart, len(data), seqIndent})
		afterAt = len(data)
	case afterList:
	default:
		return sp, false
	}
	sp.before, sp.after = data[:instancesAt], data[afterAt:]
	return sp, true
}

// crlfOnly reports whether every carriage return in data ends a line
// ("\r\n").
func crlfOnly(data []byte) bool {
	for {
		i := bytes.IndexByte(data, '\r')
		if i < 0 {
			return true
		}
		if i+1 == len(data) || data[i+1] != '\n' {
			return false
		}
		data = data[i+2:]
	}
}

// blankOrComment reports whether a line's text after its indentation is
// empty or a comment.
func blankOrComment(text []byte) bool {
	for _, c := range text {
		switch c {
		case ' ':
			continue
		case '#':
			return true
		}
		return false
	}
	return true
}

// isDocStart reports whether line is a bare document start marker.
func isDocStart(line []byte) bool {
	return len(bytes.TrimRight(line, " ")) == 3 && marker(line, "---")
}

// isInstancesKey reports whether line is "instances:" with nothing after it
// but spaces or a comment.
func isInstancesKey(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("instances:"))
	if !ok {
		return false
	}
	t := bytes.TrimLeft(rest, " ")
	return len(t) == 0 || (t[0] == '#' && len(t) < len(rest))
}

// isPlainKeyLine reports whether line starts a block mapping entry whose key
// is a plain word: letters, digits, "_" and "-", starting with a letter.
func isPlainKeyLine(line []byte) bool {
	if len(line) == 0 || !isLetter(line[0]) {
		return false
	}
	for i := 1; i < len(line); i++ {
		c := line[i]
		switch {
		case isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-':
		case c == ':':
			return i+1 == len(line) || line[i+1] == ' '
		default:
			return false
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isEntry reports whether text starts a block sequence entry: "-" followed
// by a space or nothing.
func isEntry(text []byte) bool {
	return len(text) > 0 && text[0] == '-' && (len(text) == 1 || text[1] == ' ')
}

// yamlConverter converts the elements of the instances list to JSON, one at
// a time, reusing its buffers.
type yamlConverter struct {
	fast yamlItem
	slow int // the elements the library converted
}

// item converts one element, the text of a one-element block sequence at
// indentation indent, to the JSON of the element; ok is false when it does
// not convert (the whole-tree reader then reports why).
func (c *yamlConverter) item(text []byte, indent int) ([]byte, bool) {
	if j, ok := c.fast.convert(text, indent); ok {
		return j, true
	}
	c.slow++
	j, err := yaml.YAMLToJSONStrict(text)
	if err != nil {
		return nil, false
	}
	var list []json.RawMessage
	if err := json.Unmarshal(j, &list); err != nil || len(list) != 1 {
		return nil, false
	}
	return list[0], true
}
