package sim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The Resource Graph query language (KQL) subset the simulator evaluates:
//
//	<Table> | where <pred> [and <pred>…] | extend n = e, … | project c, n = e, …
//	        | summarize count() [by c, …] | order by c [asc|desc]
//
// with predicates ==, =~, !=, !~, in, in~, !in, !in~, startswith and
// startswith_cs, and expressions of columns, dotted property paths,
// string literals, tostring() and coalesce(). Column names are
// case-sensitive, as in KQL; a dotted path into a dynamic column that does
// not exist is null, as in KQL. Anything else is refused, so a query the
// simulator cannot run fails loudly instead of answering wrongly.

// kqlRow is one row: column name → value (dynamic values are decoded JSON).
type kqlRow = map[string]any

type kqlExpr struct {
	fn   string    // "tostring", "coalesce"; "" for a path or literal
	args []kqlExpr // the function's arguments
	path []string  // column, then property names
	lit  *string   // a string literal
}

type kqlPred struct {
	left kqlExpr
	op   string
	vals []string
}

type kqlAssign struct {
	name string
	expr kqlExpr
}

type kqlOp struct {
	kind    string // where, extend, project, summarize, order
	preds   []kqlPred
	assigns []kqlAssign
	by      []string
	desc    bool
}

// kqlQuery is a parsed query.
type kqlQuery struct {
	table string // lower-case
	ops   []kqlOp
}

// splitTop splits s at sep outside quotes and parentheses.
func splitTop(s string, sep byte) []string {
	return splitOutside(s, func(i int) int {
		if s[i] == sep {
			return 1
		}
		return 0
	})
}

// splitOutside splits s where sepAt(i) gives a separator's width, looking
// only outside quotes and parentheses.
func splitOutside(s string, sepAt func(i int) int) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && i >= start:
			if w := sepAt(i); w > 0 {
				out = append(out, s[start:i])
				start = i + w
				i = start - 1
			}
		}
	}
	return append(out, s[start:])
}

var (
	reIdent  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^=~].*)$`)
	rePred   = regexp.MustCompile(`(?is)^(\S+)\s+(==|=~|!=|!~|in~|in|!in~|!in|startswith_cs|startswith)\s*(.+)$`)
	reOrder  = regexp.MustCompile(`(?i)^(?:order|sort)\s+by\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?$`)
	reSumm   = regexp.MustCompile(`(?is)^summarize\s+count\(\)(?:\s+by\s+(.+))?$`)
)

// parseKQL parses a query of the subset; the error says what it refused.
func parseKQL(q string) (*kqlQuery, error) {
	parts := splitTop(q, '|')
	table := strings.TrimSpace(parts[0])
	if !reIdent.MatchString(table) {
		return nil, fmt.Errorf("the query must start with a table name, not %q", table)
	}
	out := &kqlQuery{table: strings.ToLower(table)}
	for _, part := range parts[1:] {
		part = strings.TrimSpace(part)
		word, rest, _ := strings.Cut(part, " ")
		rest = strings.TrimSpace(rest)
		var op kqlOp
		var err error
		switch strings.ToLower(word) {
		case "where":
			op.kind = "where"
			for _, p := range splitAnd(rest) {
				pred, perr := parsePred(p)
				if perr != nil {
					return nil, perr
				}
				op.preds = append(op.preds, pred)
			}
		case "extend", "project":
			op.kind = strings.ToLower(word)
			op.assigns, err = parseAssigns(rest, op.kind == "project")
		case "summarize":
			m := reSumm.FindStringSubmatch(part)
			if m == nil {
				return nil, fmt.Errorf("summarize: only count() [by columns] is served: %q", part)
			}
			op.kind = "summarize"
			if m[1] != "" {
				for _, c := range splitTop(m[1], ',') {
					c = strings.TrimSpace(c)
					if !reIdent.MatchString(c) {
						return nil, fmt.Errorf("summarize by: %q is not a column", c)
					}
					op.by = append(op.by, c)
				}
			}
		case "order", "sort":
			m := reOrder.FindStringSubmatch(part)
			if m == nil {
				return nil, fmt.Errorf("order by: only one column [asc|desc] is served: %q", part)
			}
			op.kind, op.by, op.desc = "order", []string{m[1]}, !strings.EqualFold(m[2], "asc")
		default:
			return nil, fmt.Errorf("the operator %q is not served by the simulator", word)
		}
		if err != nil {
			return nil, err
		}
		out.ops = append(out.ops, op)
	}
	return out, nil
}

// splitAnd splits a where clause at "and" outside quotes and parentheses.
func splitAnd(s string) []string {
	return splitOutside(s, func(i int) int {
		if i > 0 && i+5 <= len(s) && isSpace(s[i-1]) && strings.EqualFold(s[i:i+3], "and") && isSpace(s[i+3]) {
			return 4
		}
		return 0
	})
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func parsePred(p string) (kqlPred, error) {
	m := rePred.FindStringSubmatch(strings.TrimSpace(p))
	if m == nil {
		return kqlPred{}, fmt.Errorf("where: the predicate %q is not served", p)
	}
	left, err := parseExpr(m[1])
	if err != nil {
		return kqlPred{}, err
	}
	pred := kqlPred{left: left, op: strings.ToLower(m[2])}
	v := strings.TrimSpace(m[3])
	if strings.Contains(pred.op, "in") && !strings.HasPrefix(pred.op, "starts") {
		if !strings.HasPrefix(v, "(") || !strings.HasSuffix(v, ")") {
			return kqlPred{}, fmt.Errorf("where: %s needs a parenthesised list: %q", pred.op, p)
		}
		for _, x := range splitTop(v[1:len(v)-1], ',') {
			s, ok := literal(strings.TrimSpace(x))
			if !ok {
				return kqlPred{}, fmt.Errorf("where: %q is not a string literal", x)
			}
			pred.vals = append(pred.vals, s)
		}
		return pred, nil
	}
	s, ok := literal(v)
	if !ok {
		return kqlPred{}, fmt.Errorf("where: %q is not a string literal", v)
	}
	pred.vals = []string{s}
	return pred, nil
}

func literal(s string) (string, bool) {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1], true
	}
	return "", false
}

func parseAssigns(s string, project bool) ([]kqlAssign, error) {
	var out []kqlAssign
	for _, a := range splitTop(s, ',') {
		a = strings.TrimSpace(a)
		if project && reIdent.MatchString(a) {
			out = append(out, kqlAssign{name: a, expr: kqlExpr{path: []string{a}}})
			continue
		}
		m := reAssign.FindStringSubmatch(a)
		if m == nil {
			return nil, fmt.Errorf("%q is not name = expression", a)
		}
		e, err := parseExpr(m[2])
		if err != nil {
			return nil, err
		}
		out = append(out, kqlAssign{name: m[1], expr: e})
	}
	return out, nil
}

var rePath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

func parseExpr(s string) (kqlExpr, error) {
	s = strings.TrimSpace(s)
	if v, ok := literal(s); ok {
		return kqlExpr{lit: &v}, nil
	}
	if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		fn := strings.ToLower(strings.TrimSpace(s[:i]))
		if fn != "tostring" && fn != "coalesce" {
			return kqlExpr{}, fmt.Errorf("the function %q is not served by the simulator", s[:i])
		}
		e := kqlExpr{fn: fn}
		for _, a := range splitTop(s[i+1:len(s)-1], ',') {
			arg, err := parseExpr(a)
			if err != nil {
				return kqlExpr{}, err
			}
			e.args = append(e.args, arg)
		}
		if fn == "tostring" && len(e.args) != 1 {
			return kqlExpr{}, fmt.Errorf("tostring takes one argument: %q", s)
		}
		return e, nil
	}
	if !rePath.MatchString(s) {
		return kqlExpr{}, fmt.Errorf("the expression %q is not served by the simulator", s)
	}
	return kqlExpr{path: strings.Split(s, ".")}, nil
}

// eval is the expression's value in row; an unknown column is an error, as
// KQL fails to resolve it.
func (e kqlExpr) eval(row kqlRow) (any, error) {
	switch {
	case e.lit != nil:
		return *e.lit, nil
	case e.fn == "tostring":
		v, err := e.args[0].eval(row)
		return toString(v), err
	case e.fn == "coalesce":
		for _, a := range e.args {
			v, err := a.eval(row)
			if err != nil {
				return nil, err
			}
			if v != nil && v != "" {
				return v, nil
			}
		}
		return nil, nil
	}
	v, ok := row[e.path[0]]
	if !ok {
		return nil, fmt.Errorf("Failed to resolve scalar expression named '%s'", e.path[0])
	}
	for _, k := range e.path[1:] {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil
		}
		v = m[k]
	}
	return v, nil
}

// toString is KQL's tostring: a string as is, null as "", others as JSON.
func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (p kqlPred) holds(row kqlRow) (bool, error) {
	v, err := p.left.eval(row)
	if err != nil {
		return false, err
	}
	s := toString(v)
	switch p.op {
	case "==":
		return s == p.vals[0], nil
	case "!=":
		return s != p.vals[0], nil
	case "=~":
		return strings.EqualFold(s, p.vals[0]), nil
	case "!~":
		return !strings.EqualFold(s, p.vals[0]), nil
	case "startswith":
		return strings.HasPrefix(strings.ToLower(s), strings.ToLower(p.vals[0])), nil
	case "startswith_cs":
		return strings.HasPrefix(s, p.vals[0]), nil
	}
	in := false
	for _, x := range p.vals {
		if (strings.HasSuffix(p.op, "~") && strings.EqualFold(s, x)) || s == x {
			in = true
		}
	}
	return in != strings.HasPrefix(p.op, "!"), nil
}

// run evaluates the query's operators over rows.
func (q *kqlQuery) run(rows []kqlRow) ([]kqlRow, error) {
	for _, op := range q.ops {
		var out []kqlRow
		switch op.kind {
		case "where":
		rows:
			for _, r := range rows {
				for _, p := range op.preds {
					ok, err := p.holds(r)
					if err != nil {
						return nil, err
					}
					if !ok {
						continue rows
					}
				}
				out = append(out, r)
			}
		case "extend", "project":
			for _, r := range rows {
				n := kqlRow{}
				if op.kind == "extend" {
					for k, v := range r {
						n[k] = v
					}
				}
				for _, a := range op.assigns {
					v, err := a.expr.eval(r)
					if err != nil {
						return nil, err
					}
					n[a.name] = v
				}
				out = append(out, n)
			}
		case "summarize":
			groups := map[string]kqlRow{}
			var order []string
			for _, r := range rows {
				g := kqlRow{}
				for _, c := range op.by {
					v, ok := r[c]
					if !ok {
						return nil, fmt.Errorf("Failed to resolve scalar expression named '%s'", c)
					}
					g[c] = v
				}
				k, _ := json.Marshal(g)
				if groups[string(k)] == nil {
					g["count_"] = 0
					groups[string(k)] = g
					order = append(order, string(k))
				}
				groups[string(k)]["count_"] = groups[string(k)]["count_"].(int) + 1
			}
			for _, k := range order {
				out = append(out, groups[k])
			}
		case "order":
			c := op.by[0]
			for _, r := range rows {
				if _, ok := r[c]; !ok {
					return nil, fmt.Errorf("Failed to resolve scalar expression named '%s'", c)
				}
			}
			out = append(out, rows...)
			sort.SliceStable(out, func(i, j int) bool {
				a, b := toString(out[i][c]), toString(out[j][c])
				if op.desc {
					return a > b
				}
				return a < b
			})
		}
		rows = out
	}
	return rows, nil
}
