package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/gpufinops/gpufinops/pkg/cmd/root"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"

	// iam-policy prints each registered cloud's policy.
	_ "github.com/gpufinops/gpufinops/providers/all"
)

// formatCases are command lines (without -o) that run in-process, per
// command path; each is run with every format the command declares.
func formatCases(t *testing.T) map[string][][]string {
	// A whole report marked shard 1/1 is what report merge reads.
	var doc map[string]any
	if err := json.Unmarshal(run(t, []string{"analyze", "--demo", "-o", "json"}), &doc); err != nil {
		t.Fatal(err)
	}
	doc["shard"] = map[string]int{"index": 1, "count": 1}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(t.TempDir(), "part.json")
	if err := os.WriteFile(part, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string][][]string{
		"analyze":         {{"analyze", "--demo"}},
		"inventory":       {{"inventory", "--demo"}},
		"sharing plan":    {{"sharing", "plan", "--demo"}},
		"commit-plan":     {{"commit-plan", "--demo"}},
		"tags audit":      {{"tags", "audit", "--demo"}},
		"fit":             {{"fit", "--model", "llama-3.1-70b"}},
		"prices":          {{"prices", "--gpu", "H100"}},
		"diff":            {{"diff", "../../pkg/reportdiff/testdata/old.json", "../../pkg/reportdiff/testdata/new.json"}},
		"catalog status":  {{"catalog", "status"}},
		"catalog diff":    {{"catalog", "diff", "embedded", "embedded"}},
		"billing summary": {{"billing", "summary", "--billing", "../../testdata/billing/focus-1.0-sample.csv"}},
		"iam-policy":      {{"iam-policy", "aws"}, {"iam-policy", "azure"}, {"iam-policy", "gcp"}, {"iam-policy", "aws", "--idle-stop"}, {"iam-policy", "azure", "--idle-stop"}, {"iam-policy", "gcp", "--idle-stop"}},
		"report merge":    {{"report", "merge", part}},
	}
}

// run executes args in-process and returns what they print.
func run(t *testing.T, args []string) []byte {
	t.Helper()
	f, out := factory()
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return bytes.Clone(out.Bytes())
}

// TestEveryFormatIsWhatItSays walks the command tree and runs every command
// in every machine format it declares: -o json prints JSON (and --jq reads
// it), -o yaml prints YAML, not JSON. Doctor and idle-stop need a cloud:
// internal/e2e and pkg/cmd/doctor run them.
func TestEveryFormatIsWhatItSays(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	cases := formatCases(t)
	elsewhere := map[string]bool{"doctor": true, "idle-stop": true}
	f, _ := factory()
	ran := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		o := c.Flags().Lookup("output")
		if o == nil {
			return
		}
		of, ok := o.Value.(*cmdutil.OutputFlag)
		if !ok {
			t.Errorf("%s: -o is not a cmdutil.OutputFlag", c.CommandPath())
			return
		}
		var machine []string
		for _, f := range of.Allowed {
			if f == cmdutil.FormatJSON || f == cmdutil.FormatYAML {
				machine = append(machine, f)
			}
		}
		name := strings.TrimPrefix(c.CommandPath(), "gpufinops ")
		if len(machine) == 0 || elsewhere[name] {
			return
		}
		lines, ok := cases[name]
		if !ok {
			t.Errorf("%s declares %v: give it a command line in formatCases", name, machine)
			return
		}
		for _, line := range lines {
			for _, format := range machine {
				ran++
				args := append(slices.Clone(line), "-o", format)
				out := bytes.TrimSpace(run(t, args))
				isJSON := json.Valid(out) && len(out) > 0 && (out[0] == '{' || out[0] == '[')
				switch format {
				case cmdutil.FormatJSON:
					if !isJSON {
						t.Errorf("%v prints no JSON:\n%.300s", args, out)
						continue
					}
					if q := bytes.TrimSpace(run(t, append(slices.Clone(line), "--jq", "keys"))); !json.Valid(q) {
						t.Errorf("%v --jq keys: %.300s", line, q)
					}
				case cmdutil.FormatYAML:
					var v any
					if err := yaml.Unmarshal(out, &v); err != nil || v == nil || isJSON {
						t.Errorf("%v prints no YAML (%v):\n%.300s", args, err, out)
					}
				}
			}
		}
	}
	walk(root.NewCmdRoot(f))
	if ran < 15 {
		t.Errorf("only %d command lines ran", ran)
	}
}
