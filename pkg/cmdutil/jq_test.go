package cmdutil

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

const jqDoc = `{"summary": {"monthlySavings": 1234.50, "byKind": {"spot": 2, "idle": 1}}, "recommendations": [{"id": "a", "kind": "spot"}, {"id": "b", "kind": "idle-stop"}]}`

func TestJQRun(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{".summary.monthlySavings", "1234.5\n"},
		{".recommendations[].id", "a\nb\n"},
		{".summary.byKind", "{\n  \"idle\": 1,\n  \"spot\": 2\n}\n"},
		{"[.recommendations[] | select(.kind == \"spot\") | .id]", "[\n  \"a\"\n]\n"},
		{".missing", "null\n"},
		{"empty", ""},
		{"$ENV | length", "0\n"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			q, err := CompileJQ(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := q.Run(context.Background(), &out, []byte(jqDoc)); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
}

func TestCompileJQErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{".a |", `--jq ".a |": unexpected EOF`},
		{".[", `--jq ".[": unexpected EOF`},
		{"nosuchfunc(1)", `--jq "nosuchfunc(1)": function not defined: nosuchfunc/1`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := CompileJQ(tc.expr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if ExitCodeFor(err) != ExitUsage || strings.Contains(err.Error(), "\n") {
				t.Errorf("exit code %d for %q, want 2 and one line", ExitCodeFor(err), err)
			}
		})
	}
}

func TestJQRuntimeError(t *testing.T) {
	q, err := CompileJQ(".summary.monthlySavings | keys")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = q.Run(context.Background(), &out, []byte(jqDoc))
	if err == nil || strings.Contains(err.Error(), "\n") || ExitCodeFor(err) != ExitError {
		t.Fatalf("error %v (exit %d), want one line, exit 1", err, ExitCodeFor(err))
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q before the error", out.String())
	}
}
