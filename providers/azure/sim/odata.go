package sim

// The subset of OData's $filter the Retail Prices API is asked in:
//
//	expr       = and *( "or" and )
//	and        = primary *( "and" primary )
//	primary    = "(" expr ")" / comparison / contains
//	comparison = field "eq" string
//	contains   = "contains" "(" field "," string ")"
//	string     = "'" *( any but "'" / "''" ) "'"
//
// "and" binds tighter than "or" (OData's precedence); keywords are matched
// without case, as ABNF's quoted strings are; words are separated by
// spaces, parentheses, commas or quotes. Anything else is a parse error.

import (
	"fmt"
	"strings"
)

// maxFilterDepth bounds the nesting of parentheses a filter may have.
const maxFilterDepth = 64

// filterExpr is a parsed $filter.
type filterExpr interface {
	// match evaluates the filter comparing values with case (cs) or
	// without (the Retail Prices API before 2023-01-01-preview).
	match(field func(name string) string, cs bool) bool
}

// cmpExpr is "field eq 'value'" or "contains(field, 'value')".
type cmpExpr struct {
	field, value string
	contains     bool
}

// boolExpr is the terms of an "and" or an "or".
type boolExpr struct {
	or    bool
	terms []filterExpr
}

func (c cmpExpr) match(field func(string) string, cs bool) bool {
	got, want := field(c.field), c.value
	if !cs {
		got, want = strings.ToLower(got), strings.ToLower(want)
	}
	if c.contains {
		return strings.Contains(got, want)
	}
	return got == want
}

func (b boolExpr) match(field func(string) string, cs bool) bool {
	for _, t := range b.terms {
		if t.match(field, cs) == b.or {
			return b.or
		}
	}
	return !b.or
}

// tokKind is what a token of a filter is.
type tokKind int

const (
	tokWord tokKind = iota
	tokString
	tokOpen
	tokClose
	tokComma
)

type token struct {
	kind tokKind
	text string // a word, or a string literal's value without its quotes
	pos  int
}

// tokenize splits a filter into words, string literals and punctuation.
func tokenize(f string) ([]token, error) {
	var out []token
	for i := 0; i < len(f); {
		c := f[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, token{kind: tokOpen, pos: i})
			i++
		case c == ')':
			out = append(out, token{kind: tokClose, pos: i})
			i++
		case c == ',':
			out = append(out, token{kind: tokComma, pos: i})
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(f) {
					return nil, fmt.Errorf("unterminated string at %d", i)
				}
				if f[j] == '\'' {
					if j+1 < len(f) && f[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(f[j])
				j++
			}
			out = append(out, token{kind: tokString, text: b.String(), pos: i})
			i = j + 1
		case isWordByte(c):
			j := i
			for j < len(f) && isWordByte(f[j]) {
				j++
			}
			out = append(out, token{kind: tokWord, text: f[i:j], pos: i})
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q at %d", c, i)
		}
	}
	return out, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isField reports whether a word can name a field: a letter or underscore,
// then letters, digits or underscores.
func isField(w string) bool {
	return w != "" && !(w[0] >= '0' && w[0] <= '9') && !isKeyword(w)
}

func isKeyword(w string) bool {
	return strings.EqualFold(w, "and") || strings.EqualFold(w, "or") || strings.EqualFold(w, "eq")
}

// parseODataFilter parses a $filter of the subset above; an empty filter
// is nil (everything matches).
func parseODataFilter(f string) (filterExpr, error) {
	toks, err := tokenize(f)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	p := &filterParser{toks: toks}
	e, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("unexpected %s at %d", p.toks[p.i].describe(), p.toks[p.i].pos)
	}
	return e, nil
}

type filterParser struct {
	toks []token
	i    int
}

func (t token) describe() string {
	switch t.kind {
	case tokString:
		return "string"
	case tokOpen:
		return "'('"
	case tokClose:
		return "')'"
	case tokComma:
		return "','"
	}
	return fmt.Sprintf("%q", t.text)
}

func (p *filterParser) peekWord(w string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == tokWord && strings.EqualFold(p.toks[p.i].text, w)
}

func (p *filterParser) next(kind tokKind, what string) (token, error) {
	if p.i >= len(p.toks) {
		return token{}, fmt.Errorf("%s expected at the end", what)
	}
	t := p.toks[p.i]
	if t.kind != kind {
		return token{}, fmt.Errorf("%s expected at %d, got %s", what, t.pos, t.describe())
	}
	p.i++
	return t, nil
}

func (p *filterParser) expr(depth int) (filterExpr, error) {
	return p.chain("or", func() (filterExpr, error) {
		return p.chain("and", func() (filterExpr, error) { return p.primary(depth) })
	})
}

// chain parses operands joined by the keyword op.
func (p *filterParser) chain(op string, operand func() (filterExpr, error)) (filterExpr, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	terms := []filterExpr{first}
	for p.peekWord(op) {
		p.i++
		t, err := operand()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return boolExpr{or: op == "or", terms: terms}, nil
}

func (p *filterParser) primary(depth int) (filterExpr, error) {
	if p.i >= len(p.toks) {
		return nil, fmt.Errorf("a term expected at the end")
	}
	t := p.toks[p.i]
	switch {
	case t.kind == tokOpen:
		if depth >= maxFilterDepth {
			return nil, fmt.Errorf("parentheses nested deeper than %d", maxFilterDepth)
		}
		p.i++
		e, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, err := p.next(tokClose, "')'"); err != nil {
			return nil, err
		}
		return e, nil
	case t.kind == tokWord && strings.EqualFold(t.text, "contains") && p.i+1 < len(p.toks) && p.toks[p.i+1].kind == tokOpen:
		p.i += 2
		f, err := p.next(tokWord, "a field")
		if err != nil {
			return nil, err
		}
		if !isField(f.text) {
			return nil, fmt.Errorf("%q at %d is no field", f.text, f.pos)
		}
		if _, err := p.next(tokComma, "','"); err != nil {
			return nil, err
		}
		v, err := p.next(tokString, "a string")
		if err != nil {
			return nil, err
		}
		if _, err := p.next(tokClose, "')'"); err != nil {
			return nil, err
		}
		return cmpExpr{field: strings.ToLower(f.text), value: v.text, contains: true}, nil
	case t.kind == tokWord && isField(t.text):
		p.i++
		if !p.peekWord("eq") {
			if p.i < len(p.toks) {
				return nil, fmt.Errorf("'eq' expected at %d after %q (the only comparison served)", p.toks[p.i].pos, t.text)
			}
			return nil, fmt.Errorf("'eq' expected after %q", t.text)
		}
		p.i++
		v, err := p.next(tokString, "a string")
		if err != nil {
			return nil, err
		}
		return cmpExpr{field: strings.ToLower(t.text), value: v.text}, nil
	}
	return nil, fmt.Errorf("a term expected at %d, got %s", t.pos, t.describe())
}
