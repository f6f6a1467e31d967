package report

// appendIndent appends src, compact JSON as json.Marshal writes it, to dst
// indented exactly as json.Indent(dst, src, prefix, indent) would: a
// newline, the prefix and one indent per level before each element and
// closing bracket, ": " after keys, empty objects and arrays kept as {}
// and []. It walks the bytes once, where encoding/json's runs its scanner
// state machine per byte (the larger part of writing a large report).
// Whitespace outside strings is dropped, as in compact input there is none.
func appendIndent(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	open := false // the last byte written opened an object or array
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			newline()
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if src[j] == '"' {
					break
				}
				j++
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			depth++
			open = true
		case '}', ']':
			depth--
			if open {
				open = false // empty: {} or []
			} else {
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
