package cmdutil

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// outputCmd runs a command with AddOutputFlags(formats) and returns what
// Print wrote for doc, with a table printer that writes "TABLE".
func outputCmd(t *testing.T, formats []string, doc any, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := &cobra.Command{Use: "x", SilenceUsage: true, SilenceErrors: true}
	o := AddOutputFlags(cmd, formats...)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return Print(context.Background(), &out, o.Format(), o.Filter, doc, Printers{
			FormatTable: func(w io.Writer) error { _, err := io.WriteString(w, "TABLE\n"); return err },
		})
	}
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	err := cmd.Execute()
	return out.String(), err
}

type outDoc struct {
	SchemaVersion string    `json:"schemaVersion"`
	Kind          string    `json:"kind"`
	Items         []outItem `json:"items"`
}

type outItem struct {
	ID   string  `json:"id"`
	Cost float64 `json:"cost"`
	Note string  `json:"note,omitempty"`
}

var testDoc = outDoc{"1.0", "Test", []outItem{{"a", 1234.5, "<b>&"}, {"b", 0.1, ""}}}

func TestOutputFormats(t *testing.T) {
	formats := []string{"table", "json", "yaml"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "TABLE\n"},
		{[]string{"-o", "json"}, "{\n  \"schemaVersion\": \"1.0\",\n  \"kind\": \"Test\",\n  \"items\": [\n    {\n      \"id\": \"a\",\n      \"cost\": 1234.5,\n      \"note\": \"<b>&\"\n    },\n    {\n      \"id\": \"b\",\n      \"cost\": 0.1\n    }\n  ]\n}\n"},
		{[]string{"-o", "yaml"}, "items:\n- cost: 1234.5\n  id: a\n  note: <b>&\n- cost: 0.1\n  id: b\nkind: Test\nschemaVersion: \"1.0\"\n"},
		{[]string{"--jq", ".items[].id"}, "a\nb\n"},
		{[]string{"-o", "json", "-q", ".items | length"}, "2\n"},
		{[]string{"--template", `{{range .items}}{{.id}}={{.cost}} {{end}}{{len .items}}`}, "a=1234.5 b=0.1 2"},
		{[]string{"-t", `{{join "," (pluck "id" .items)}} {{money (index .items 0).cost "USD"}} {{percent "12.345"}}`}, "a,b $1,234.50 12.3 %"},
		{[]string{"-t", `{{truncate 3 "abcdef"}} {{tojson (index .items 1)}} {{.missing}}`}, `ab… {"cost":0.1,"id":"b"} <no value>`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := outputCmd(t, formats, testDoc, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOutputFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		formats []string
		args    []string
		want    string
		code    ExitCode
	}{
		{[]string{"table", "json"}, []string{"-o", "table", "--jq", ".a"}, "--jq needs -o json (the output is table)", ExitUsage},
		{[]string{"table", "json"}, []string{"-o", "table", "--template", "{{.a}}"}, "--template needs -o json (the output is table)", ExitUsage},
		{[]string{"table", "json"}, []string{"--jq", ".a |"}, `--jq ".a |": unexpected EOF`, ExitUsage},
		{[]string{"table", "json"}, []string{"--template", "{{.a"}, "--template: ", ExitUsage},
		{[]string{"table", "json"}, []string{"--jq", ".", "--jq-timeout", "0s"}, "--jq-timeout: ", ExitUsage},
		{[]string{"table", "json"}, []string{"--jq", ".", "--template", "x"}, "[jq template] were all set", ExitError},
		{[]string{"table", "json"}, []string{"-t", `{{index .items 7}}`}, "--template: ", ExitError},
		{[]string{"table", "json"}, []string{"-t", `{{money .kind "USD"}}`}, "--template: ", ExitError},
		{[]string{"table"}, []string{"--jq", "."}, "unknown flag: --jq", ExitError},
		{[]string{"table", "json"}, []string{"-o", "xml"}, `"xml" is not one of table, json`, ExitError},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := outputCmd(t, tc.formats, testDoc, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			if tc.code == ExitUsage && ExitCodeFor(err) != ExitUsage {
				t.Errorf("exit code %d, want %d", ExitCodeFor(err), ExitUsage)
			}
			if out != "" {
				t.Errorf("wrote %q before the error", out)
			}
		})
	}
}

// TestPrintOwnJSON checks that a command's own JSON printer is what --jq
// filters, and that a format without a printer is an error.
func TestPrintOwnJSON(t *testing.T) {
	var out bytes.Buffer
	q, err := CompileJQ(".own")
	if err != nil {
		t.Fatal(err)
	}
	own := Printers{FormatJSON: func(w io.Writer) error { _, err := io.WriteString(w, `{"own": true}`); return err }}
	if err := Print(context.Background(), &out, FormatJSON, q, testDoc, own); err != nil || out.String() != "true\n" {
		t.Errorf("got %q, %v", out.String(), err)
	}
	if err := Print(context.Background(), &out, FormatCSV, nil, testDoc, own); err == nil {
		t.Error("csv without a printer: no error")
	}
}
