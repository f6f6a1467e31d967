package fleet

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// yamlItem converts one element of the instances list from YAML to JSON
// without the YAML library, for the subset fleet files are written in: the
// one Encoder writes, and most written by hand. It gives up (ok false) on
// anything outside that subset, and the library converts the element
// instead; it must never accept what the library refuses or read a value
// differently. The subset:
//
//   - printable ASCII, and printable non-ASCII text inside quoted strings;
//     no tabs; comments on lines of their own or after a value;
//   - block mappings and block sequences, one entry a line, a mapping's
//     keys at one indentation ("key:" may be followed by a sequence at the
//     key's own indentation);
//   - flow mappings and sequences that close on the line they open on;
//   - keys: plain strings as below, or quoted strings;
//   - scalars: double-quoted strings (with escapes) and single-quoted ones
//     on one line; decimal numbers; true, false, null and ~ in the
//     spellings YAML 1.1 gives them; plain strings of letters, digits, spaces and "._/+-" that start
//     with a letter and are no other YAML 1.1 word (yes, no, on, off, y, n).
//
// The JSON is the one sigs.k8s.io/yaml writes for the element up to the
// order of keys: numbers are written as encoding/json writes the float64 or
// int YAML reads them as. The fuzz and property tests hold it to that.
type yamlItem struct {
	lines []itemLine
	at    int // the next line
	out   []byte
	keys  [][]byte // the keys of the mappings being read, for repeats
}

// itemLine is one line that is neither blank nor a comment.
type itemLine struct {
	indent int
	text   []byte // after the indentation, trailing spaces removed
}

// maxFastKeys is the most keys a mapping may have on the fast path: each
// key is compared with the ones before it.
const maxFastKeys = 64

// convert converts text, a one-element block sequence at indentation
// indent, and returns the element's JSON (valid until the next call).
func (y *yamlItem) convert(text []byte, indent int) ([]byte, bool) {
	if !y.splitLines(text) || len(y.lines) == 0 {
		return nil, false
	}
	y.at, y.out, y.keys = 0, y.out[:0], y.keys[:0]
	first := y.lines[0]
	if first.indent != indent || !isEntry(first.text) {
		return nil, false
	}
	if !y.entry(first) {
		return nil, false
	}
	return y.out, y.at == len(y.lines)
}

// splitLines fills y.lines from text, refusing what the subset leaves out.
func (y *yamlItem) splitLines(text []byte) bool {
	y.lines = y.lines[:0]
	start, indent, inIndent := 0, 0, true
	nonASCII := false
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == '\n' {
			end := i
			if end > start && text[end-1] == '\r' {
				end-- // a "\r\n" line end
			}
			for end > start && text[end-1] == ' ' {
				end--
			}
			if end > start+indent && text[start+indent] != '#' { // not blank, not a comment
				y.lines = append(y.lines, itemLine{indent: indent, text: text[start+indent : end]})
			}
			start, indent, inIndent = i+1, 0, true
			continue
		}
		c := text[i]
		if c == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			continue
		}
		if c < 0x20 || c == 0x7f {
			return false
		}
		nonASCII = nonASCII || c >= 0x80
		if inIndent {
			if c == ' ' {
				indent++
			} else {
				inIndent = false
			}
		}
	}
	// Non-ASCII text is taken in quoted strings and comments, where it
	// must be text YAML reads as it is.
	return !nonASCII || printableText(text)
}

// entry reads the block sequence entry on line l (its "-" at l.indent) and
// what belongs to it.
func (y *yamlItem) entry(l itemLine) bool {
	y.at++
	if len(l.text) < 2 {
		return false // "-" alone: the value is on the lines after, or null
	}
	rest := l.text[1:]
	col := l.indent + 1
	for len(rest) > 0 && rest[0] == ' ' {
		rest, col = rest[1:], col+1
	}
	if len(rest) > 0 && rest[0] == '#' {
		return false // "- # …": the value is on the lines after, or null
	}
	if isKeyStart(rest) {
		return y.mapping(itemLine{indent: col, text: rest})
	}
	return y.inlineLast(rest)
}

// isKeyStart reports whether text starts with a key followed by ":" and a
// space or the end: the first entry of a block mapping.
func isKeyStart(text []byte) bool {
	_, n, ok := fastKey(text)
	return ok && n < len(text) && text[n] == ':' && (n+1 == len(text) || text[n+1] == ' ')
}

// inlineLast reads the value that ends a sequence entry's line (a scalar or
// flow collection); no line may be nested under the entry.
func (y *yamlItem) inlineLast(text []byte) bool {
	n, ok := y.value(text, false)
	if !ok || !endOfLine(text, n) {
		return false
	}
	return y.at == len(y.lines) || y.lines[y.at].indent <= y.lines[y.at-1].indent
}

// mapping reads a block mapping whose first entry is first (already
// consumed from y.lines, or the rest of a sequence entry's line) and whose
// keys are at first.indent.
func (y *yamlItem) mapping(first itemLine) bool {
	m := first.indent
	y.out = append(y.out, '{')
	keys0 := len(y.keys)
	defer func() { y.keys = y.keys[:keys0] }()
	l := first
	for n := 0; ; n++ {
		key, kn, ok := fastKey(l.text)
		if !ok || kn >= len(l.text) || l.text[kn] != ':' || (kn+1 < len(l.text) && l.text[kn+1] != ' ') {
			return false
		}
		for _, k := range y.keys[keys0:] {
			if string(k) == string(key) {
				return false // a repeated key: the library names it
			}
		}
		if len(y.keys)-keys0 >= maxFastKeys {
			return false
		}
		y.keys = append(y.keys, key)
		if n > 0 {
			y.out = append(y.out, ',')
		}
		y.out = appendJSONString(y.out, key)
		y.out = append(y.out, ':')
		rest := trimLeftSpace(l.text[kn+1:])
		if len(rest) > 0 && rest[0] != '#' { // after ": ", "#" starts a comment
			vn, ok := y.value(rest, false)
			if !ok || !endOfLine(rest, vn) {
				return false
			}
		} else if !y.nested(m) {
			return false
		}
		// The next entry, or the end of this mapping.
		if y.at == len(y.lines) {
			break
		}
		next := y.lines[y.at]
		if next.indent < m {
			break
		}
		if next.indent > m {
			return false // a continuation line or a bad indentation
		}
		y.at++
		l = next
	}
	y.out = append(y.out, '}')
	return true
}

// nested reads the value of a key at indentation m given on the lines
// after it: a block mapping or sequence indented more, a sequence at m, or
// nothing (null).
func (y *yamlItem) nested(m int) bool {
	if y.at == len(y.lines) {
		y.out = append(y.out, "null"...)
		return true
	}
	next := y.lines[y.at]
	switch {
	case next.indent > m && isEntry(next.text):
		return y.sequence(next.indent)
	case next.indent > m && isKeyStart(next.text):
		y.at++
		return y.mapping(next)
	case next.indent > m:
		return false // a scalar on the lines after its key
	case next.indent == m && isEntry(next.text):
		return y.sequence(m)
	}
	y.out = append(y.out, "null"...)
	return true
}

// sequence reads a block sequence whose entries are at indentation q.
func (y *yamlItem) sequence(q int) bool {
	y.out = append(y.out, '[')
	for n := 0; y.at < len(y.lines); n++ {
		l := y.lines[y.at]
		if l.indent != q || !isEntry(l.text) {
			if l.indent > q {
				return false
			}
			break
		}
		if n > 0 {
			y.out = append(y.out, ',')
		}
		if !y.entry(l) {
			return false
		}
	}
	y.out = append(y.out, ']')
	return true
}

// value reads a scalar or flow collection at the start of text and returns
// how much of text it took; in flow context a plain scalar ends at ",",
// "]" or "}".
func (y *yamlItem) value(text []byte, flow bool) (int, bool) {
	if len(text) == 0 {
		return 0, false
	}
	switch text[0] {
	case '{':
		return y.flowMapping(text)
	case '[':
		return y.flowSequence(text)
	case '"', '\'':
		s, n, ok := quoted(text)
		if !ok {
			return 0, false
		}
		y.out = appendJSONString(y.out, s)
		return n, true
	}
	// A plain scalar ends at the end of the line or a comment (" #"),
	// and in flow context at ",", "]" or "}".
	n := 0
	for n < len(text) && !(flow && (text[n] == ',' || text[n] == ']' || text[n] == '}')) &&
		!(text[n] == '#' && n > 0 && text[n-1] == ' ') {
		n++
	}
	s := text[:n]
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	if !y.scalar(s) {
		return 0, false
	}
	return n, true
}

// scalar writes a plain scalar's JSON.
func (y *yamlItem) scalar(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	c := s[0]
	if c == '-' || c >= '0' && c <= '9' {
		var ok bool
		y.out, ok = appendYAMLNumber(y.out, s)
		return ok
	}
	switch string(s) {
	case "true", "True", "TRUE":
		y.out = append(y.out, "true"...)
		return true
	case "false", "False", "FALSE":
		y.out = append(y.out, "false"...)
		return true
	case "null", "Null", "NULL", "~":
		y.out = append(y.out, "null"...)
		return true
	}
	if !plainWord(s) {
		return false
	}
	y.out = appendJSONString(y.out, s)
	return true
}

// plainWord reports whether s is a plain string YAML 1.1 reads as itself:
// a letter, then letters, digits, spaces and "._/+-", not ending in a
// space, and none of the words it reads as a boolean or null.
func plainWord(s []byte) bool {
	if len(s) == 0 || !isLetter(s[0]) || s[len(s)-1] == ' ' {
		return false
	}
	for _, c := range s[1:] {
		if !(isLetter(c) || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '+' || c == '-' || c == ' ') {
			return false
		}
	}
	switch string(s) {
	case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL":
		return false
	}
	return true
}

// fastKey reads a key at the start of text: a plain word or a quoted
// string. n is how much of text it took.
func fastKey(text []byte) (key []byte, n int, ok bool) {
	if len(text) == 0 {
		return nil, 0, false
	}
	if text[0] == '"' || text[0] == '\'' {
		return quoted(text)
	}
	for n < len(text) && text[n] != ':' && text[n] != ',' && text[n] != '}' && text[n] != ']' {
		n++
	}
	if !plainWord(text[:n]) {
		return nil, 0, false
	}
	return text[:n], n, true
}

// quoted reads a quoted string that closes on its line: double-quoted,
// with YAML's escapes, or single-quoted, with two single quotes for one.
// The unquoted bytes of a string with escapes are a new slice.
func quoted(text []byte) (s []byte, n int, ok bool) {
	if text[0] == '"' {
		return doubleQuoted(text)
	}
	for i := 1; i < len(text); i++ {
		if text[i] != '\'' {
			continue
		}
		if i+1 < len(text) && text[i+1] == '\'' {
			// An escaped quote: unquote into a copy.
			var b []byte
			for j := 1; j < len(text); j++ {
				if text[j] == '\'' {
					if j+1 < len(text) && text[j+1] == '\'' {
						b = append(b, '\'')
						j++
						continue
					}
					if !printableText(b) {
						return nil, 0, false
					}
					return b, j + 1, true
				}
				b = append(b, text[j])
			}
			return nil, 0, false
		}
		if !printableText(text[1:i]) {
			return nil, 0, false
		}
		return text[1:i], i + 1, true
	}
	return nil, 0, false
}

// yamlEscapes are the one-character escapes of a double-quoted YAML string
// and what they stand for; \x, \u and \U take a code point in hex.
var yamlEscapes = [256]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", 'n': "\n", 'v': "\v", 'f': "\f", 'r': "\r",
	'e': "\x1b", ' ': " ", '"': "\"", '\'': "'", '\\': "\\", 'N': "\u0085", '_': "\u00a0",
	'L': "\u2028", 'P': "\u2029",
}

// doubleQuoted reads a double-quoted string that closes on its line, as the
// YAML library unescapes it; an escape it refuses is refused.
func doubleQuoted(text []byte) (s []byte, n int, ok bool) {
	i := 1
	for i < len(text) && text[i] != '"' && text[i] != '\\' {
		i++
	}
	if i < len(text) && text[i] == '"' { // no escapes: the bytes as they are
		if !printableText(text[1:i]) {
			return nil, 0, false
		}
		return text[1:i], i + 1, true
	}
	var b []byte
	from := 1 // the start of the text not yet copied
	for i < len(text) {
		switch text[i] {
		case '"':
			if !printableText(text[from:i]) {
				return nil, 0, false
			}
			return append(b, text[from:i]...), i + 1, true
		case '\\':
			if !printableText(text[from:i]) || i+1 == len(text) {
				return nil, 0, false
			}
			b = append(b, text[from:i]...)
			c := text[i+1]
			i += 2
			digits := 0
			switch c {
			case 'x':
				digits = 2
			case 'u':
				digits = 4
			case 'U':
				digits = 8
			default:
				e := yamlEscapes[c]
				if e == "" {
					return nil, 0, false
				}
				b = append(b, e...)
				from = i
				continue
			}
			if i+digits > len(text) {
				return nil, 0, false
			}
			v, err := strconv.ParseUint(unsafe.String(&text[i], digits), 16, 32)
			if err != nil || v >= 0xd800 && v <= 0xdfff || v > 0x10ffff {
				return nil, 0, false
			}
			b = utf8.AppendRune(b, rune(v))
			i += digits
			from = i
		default:
			i++
		}
	}
	return nil, 0, false
}

// printableText reports whether s, the inside of a quoted string, is text
// YAML takes as it is: printable ASCII and valid UTF-8 of the runes YAML
// calls printable (U+00A0 to U+D7FF and U+E000 to U+FFFD), without the
// byte order mark and the two Unicode line breaks (U+2028, U+2029), which
// YAML 1.1 counts as breaks (the library keeps them in quoted strings, but
// they are rare enough to leave to it). U+0085, a break the library folds
// into a space, is below that range, and the library refuses runes beyond
// U+FFFD unescaped.
func printableText(s []byte) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			i++ // printable: splitLines has refused the rest
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError || r < 0xa0 || r > 0xfffd || r >= 0xd800 && r < 0xe000 ||
			r == 0xfeff || r == 0x2028 || r == 0x2029 {
			return false
		}
		i += n
	}
	return true
}

// flowMapping reads "{k: v, ...}" on one line.
func (y *yamlItem) flowMapping(text []byte) (int, bool) {
	y.out = append(y.out, '{')
	keys0 := len(y.keys)
	defer func() { y.keys = y.keys[:keys0] }()
	i := skipSpaces(text, 1)
	if i < len(text) && text[i] == '}' {
		y.out = append(y.out, '}')
		return i + 1, true
	}
	for n := 0; ; n++ {
		key, kn, ok := fastKey(text[i:])
		if !ok {
			return 0, false
		}
		i += kn
		// ": " after the key; a value is required (no "{a}" or "{a: }").
		if i+1 >= len(text) || text[i] != ':' || text[i+1] != ' ' {
			return 0, false
		}
		for _, k := range y.keys[keys0:] {
			if string(k) == string(key) {
				return 0, false
			}
		}
		if len(y.keys)-keys0 >= maxFastKeys {
			return 0, false
		}
		y.keys = append(y.keys, key)
		if n > 0 {
			y.out = append(y.out, ',')
		}
		y.out = appendJSONString(y.out, key)
		y.out = append(y.out, ':')
		i = skipSpaces(text, i+1)
		vn, ok := y.value(text[i:], true)
		if !ok {
			return 0, false
		}
		if i, ok = flowNext(text, i+vn, '}'); !ok {
			return 0, false
		}
		if text[i-1] == '}' {
			y.out = append(y.out, '}')
			return i, true
		}
	}
}

// flowSequence reads "[v, ...]" on one line.
func (y *yamlItem) flowSequence(text []byte) (int, bool) {
	y.out = append(y.out, '[')
	i := skipSpaces(text, 1)
	if i < len(text) && text[i] == ']' {
		y.out = append(y.out, ']')
		return i + 1, true
	}
	for n := 0; ; n++ {
		if n > 0 {
			y.out = append(y.out, ',')
		}
		vn, ok := y.value(text[i:], true)
		if !ok {
			return 0, false
		}
		if i, ok = flowNext(text, i+vn, ']'); !ok {
			return 0, false
		}
		if text[i-1] == ']' {
			y.out = append(y.out, ']')
			return i, true
		}
	}
}

// flowNext steps over the ", " between a flow collection's entries or its
// closing bracket; after a comma another entry must follow.
func flowNext(text []byte, i int, close byte) (int, bool) {
	i = skipSpaces(text, i)
	if i >= len(text) {
		return 0, false
	}
	switch text[i] {
	case close:
		return i + 1, true
	case ',':
		j := skipSpaces(text, i+1)
		if j >= len(text) || j == i+1 || text[j] == close || text[j] == ',' {
			return 0, false // no space after the comma, or no entry
		}
		return j, true
	}
	return 0, false
}

// endOfLine reports whether text holds nothing after i but spaces and a
// comment ("#" after a space).
func endOfLine(text []byte, i int) bool {
	j := skipSpaces(text, i)
	return j == len(text) || text[j] == '#' && j > 0 && text[j-1] == ' '
}

func skipSpaces(text []byte, i int) int {
	for i < len(text) && text[i] == ' ' {
		i++
	}
	return i
}

func trimLeftSpace(text []byte) []byte { return text[skipSpaces(text, 0):] }

// appendJSONString appends s, valid UTF-8, as a JSON string.
func appendJSONString(out, s []byte) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// appendYAMLNumber appends the JSON of a plain scalar that starts with a
// digit or "-", as sigs.k8s.io/yaml writes it: a decimal integer YAML 1.1
// reads as an int is written as it is; a decimal with a fraction or an
// exponent is read as a float64 and written as encoding/json writes one.
// Anything else (octal, hex, "_", "+", ".5", "-0", a timestamp, a float out
// of range) is refused.
func appendYAMLNumber(out, s []byte) ([]byte, bool) {
	i := 0
	if s[0] == '-' {
		i++
	}
	digits := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intDigits := i - digits
	if intDigits == 0 || (intDigits > 1 && s[digits] == '0') {
		return out, false
	}
	isInt := i == len(s)
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == f {
			return out, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == e {
			return out, false
		}
	}
	if i != len(s) {
		return out, false
	}
	if isInt {
		// -0 is the int 0; more than 18 digits may not fit an int64.
		if intDigits > 18 || string(s) == "-0" {
			return out, false
		}
		return append(out, s...), true
	}
	f, err := strconv.ParseFloat(unsafe.String(&s[0], len(s)), 64)
	if err != nil || math.IsInf(f, 0) {
		return out, false
	}
	return appendJSONFloat(out, f), true
}

// appendJSONFloat appends f as encoding/json writes a float64.
func appendJSONFloat(out []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(out)
		if n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}
