package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
)

// JQ is a compiled --jq filter, run in-process on a command's JSON output.
type JQ struct {
	expr string
	code *gojq.Code
}

// AddJQFlag adds --jq; the command checks it with CheckJQ.
func AddJQFlag(cmd *cobra.Command, expr *string) {
	cmd.Flags().StringVarP(expr, "jq", "q", "", "filter the JSON output with a jq expression (needs -o json)")
}

// CheckJQ compiles expr for a command printing format. An empty expr gives
// nil. A format other than json, or an expression that does not parse or
// compile, is a FlagError (exit code 2).
func CheckJQ(expr, format string) (*JQ, error) {
	if expr == "" {
		return nil, nil
	}
	if format != "json" {
		return nil, FlagErrorf("--jq needs -o json (the output is %s)", format)
	}
	return CompileJQ(expr)
}

// CompileJQ parses and compiles a jq expression; errors are one-line FlagErrors.
func CompileJQ(expr string) (*JQ, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, FlagErrorf("--jq %q: %s", expr, oneLine(err.Error()))
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, FlagErrorf("--jq %q: %s", expr, oneLine(err.Error()))
	}
	return &JQ{expr: expr, code: code}, nil
}

// Run filters the JSON document in data and writes each result on its own
// line: strings raw (as jq -r does, and gh --jq), other values as JSON
// indented by two spaces, object keys sorted. A runtime error stops it with a
// one-line error (exit code 1).
func (q *JQ) Run(ctx context.Context, w io.Writer, data []byte) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("--jq: the output is not JSON: %s", oneLine(err.Error()))
	}
	var out bytes.Buffer
	iter := q.code.RunWithContext(ctx, doc)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			if h, halt := err.(*gojq.HaltError); halt && h.Value() == nil {
				break
			}
			return fmt.Errorf("--jq %q: %s", q.expr, oneLine(err.Error()))
		}
		if s, isStr := v.(string); isStr {
			out.WriteString(s + "\n")
			continue
		}
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("--jq %q: %s", q.expr, oneLine(err.Error()))
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
