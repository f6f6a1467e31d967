package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/template"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
)

// Template is a compiled --template, a Go text/template run on a command's
// JSON document decoded into maps, lists, strings, numbers and booleans.
// Numbers keep their JSON digits, so money prints as the document has it.
type Template struct {
	text string
	tmpl *template.Template
}

// TemplateFuncs are the functions a --template may call besides Go's own.
var TemplateFuncs = template.FuncMap{
	// join joins a list's items with sep: {{join ", " .items}}.
	"join": func(sep string, v any) (string, error) {
		list, err := asList("join", v)
		if err != nil {
			return "", err
		}
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, sep), nil
	},
	// pluck is the field of each object in a list: {{pluck "id" .items}}.
	"pluck": func(field string, v any) ([]any, error) {
		list, err := asList("pluck", v)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(list))
		for _, x := range list {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m[field])
			}
		}
		return out, nil
	},
	// money formats an amount for people: {{money .summary.monthlySavings "USD"}} is "$1,234.50".
	"money": func(v any, code string) (string, error) {
		d, err := asDecimal("money", v)
		if err != nil {
			return "", err
		}
		return money.Format(d, code), nil
	},
	// percent formats a percentage with one decimal: {{percent .summary.savingsPercent}} is "12.5 %".
	"percent": func(v any) (string, error) {
		d, err := asDecimal("percent", v)
		if err != nil {
			return "", err
		}
		return money.Percent(d), nil
	},
	// truncate cuts a string to n characters, ending it with "…" when cut.
	"truncate": func(n int, s string) string {
		r := []rune(s)
		if n < 1 || len(r) <= n {
			return s
		}
		return string(r[:n-1]) + "…"
	},
	// timefmt formats an RFC 3339 time with a Go layout: {{timefmt "2006-01-02" .generatedAt}}.
	"timefmt": func(layout, s string) (string, error) {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return "", err
		}
		return t.Format(layout), nil
	},
	// tojson is v as compact JSON.
	"tojson": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// CompileTemplate parses a --template; an error is a one-line FlagError.
func CompileTemplate(text string) (*Template, error) {
	t, err := template.New("--template").Funcs(TemplateFuncs).Option("missingkey=default").Parse(text)
	if err != nil {
		return nil, FlagErrorf("--template: %s", oneLine(strings.TrimPrefix(err.Error(), "template: ")))
	}
	return &Template{text: text, tmpl: t}, nil
}

// Run executes the template on the JSON document in data. Nothing is written
// when it fails.
func (t *Template) Run(_ context.Context, w io.Writer, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("--template: the output is not JSON: %s", oneLine(err.Error()))
	}
	var out bytes.Buffer
	if err := t.tmpl.Execute(&out, doc); err != nil {
		return fmt.Errorf("--template: %s", oneLine(strings.TrimPrefix(err.Error(), "template: ")))
	}
	_, err := w.Write(out.Bytes())
	return err
}

func asList(fn string, v any) ([]any, error) {
	switch l := v.(type) {
	case []any:
		return l, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%s: %T is not a list", fn, v)
}

func asDecimal(fn string, v any) (decimal.Decimal, error) {
	switch n := v.(type) {
	case json.Number:
		return decimal.NewFromString(n.String())
	case string:
		return decimal.NewFromString(n)
	case float64:
		return decimal.NewFromFloat(n), nil
	case int:
		return decimal.NewFromInt(int64(n)), nil
	}
	return decimal.Decimal{}, fmt.Errorf("%s: %v is not a number", fn, v)
}
