package diff

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
)

const (
	oldReport = "../../reportdiff/testdata/old.json"
	newReport = "../../reportdiff/testdata/new.json"
)

// run executes the command with args and returns stdout and the error.
func run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ios, in, out, _ := iostreams.Test()
	in.WriteString(stdin)
	cmd := NewCmdDiff(&cmdutil.Factory{IOStreams: ios}, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

func TestDiffFormats(t *testing.T) {
	for _, tc := range []struct{ format, golden string }{
		{"table", "diff_pipe.golden"},
		{"json", "diff.json"},
		{"markdown", "diff.md"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			got, err := run(t, "", oldReport, newReport, "-o", tc.format)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("../../reportdiff/testdata/" + tc.golden)
			if err != nil {
				t.Fatal(err)
			}
			// The goldens name the files by their base names.
			want = bytes.ReplaceAll(want, []byte("old.json"), []byte(oldReport))
			want = bytes.ReplaceAll(want, []byte("new.json"), []byte(newReport))
			if got != string(want) {
				t.Errorf("output differs from %s:\n%s", tc.golden, got)
			}
		})
	}
}

func TestDiffStdin(t *testing.T) {
	data, err := os.ReadFile(newReport)
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(t, string(data), oldReport, "-", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"file": "-"`) {
		t.Errorf("standard input not named in the diff:\n%.300s", got)
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full, err := os.ReadFile(newReport)
	if err != nil {
		t.Fatal(err)
	}
	truncated := write("truncated.json", string(full[:len(full)/2]))
	future := write("v2.json", strings.Replace(string(full), `"schemaVersion": "1.1"`, `"schemaVersion": "2.0"`, 1))
	notReport := write("fleet.json", `{"apiVersion": "gpufinops/v1", "kind": "Fleet"}`)
	missing := filepath.Join(dir, "missing.json")

	for _, tc := range []struct {
		name string
		args []string
		want string
		code cmdutil.ExitCode
	}{
		{"truncated", []string{oldReport, truncated}, truncated + ": invalid report: the JSON ends early (truncated file?)", cmdutil.ExitUsage},
		{"unknown version", []string{future, newReport}, future + ": unsupported report version: schema version 2.0; this gpufinops reads 1.x reports", cmdutil.ExitUsage},
		{"not a report", []string{notReport, newReport}, notReport + ": invalid report: no schemaVersion; is this a gpufinops report?", cmdutil.ExitUsage},
		{"missing file", []string{missing, newReport}, missing + ": cannot read the report: no such file or directory", cmdutil.ExitUsage},
		{"one argument", []string{oldReport}, "give two reports: gpufinops diff OLD.json NEW.json", cmdutil.ExitUsage},
		{"two stdin", []string{"-", "-"}, "only one of the two reports can be read from standard input", cmdutil.ExitUsage},
		{"bad format", []string{oldReport, newReport, "-o", "html"}, `"html" is not one of table, json, markdown`, -1}, // the root command makes flag errors exit 2
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, "", tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if got := cmdutil.ExitCodeFor(err); tc.code >= 0 && got != tc.code {
				t.Errorf("exit code %d, want %d", got, tc.code)
			}
			if out != "" {
				t.Errorf("output on error: %q", out)
			}
		})
	}
}
