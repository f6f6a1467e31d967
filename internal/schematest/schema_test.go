package schematest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpufinops/gpufinops/pkg/cmd/root"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

const schemaDir = "../../docs/schema"

// TestSchemasUpToDate fails while a committed schema differs from what the
// Go types generate; `go run ./cmd/gen-schemas` rewrites them.
func TestSchemasUpToDate(t *testing.T) {
	got, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Files() {
		want, err := os.ReadFile(filepath.Join(schemaDir, name))
		if err != nil {
			t.Fatalf("%v (run go run ./cmd/gen-schemas)", err)
		}
		if !bytes.Equal(got[name], want) {
			t.Errorf("docs/schema/%s is stale: run go run ./cmd/gen-schemas", name)
		}
	}
}

// compile compiles a committed schema.
func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(schemaDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(BaseID+name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(BaseID + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// factory runs commands in-process on the demo fleet with the fixed clock
// and no configuration file or environment.
func factory(t *testing.T) (*cmdutil.Factory, *bytes.Buffer) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	return &cmdutil.Factory{
		IOStreams: ios,
		Config: func() (*config.Config, error) {
			return config.Load(config.Options{File: "", LookupEnv: func(string) (string, bool) { return "", false }})
		},
		Catalog: func() (pricing.Catalog, error) { return catalog.Embedded() },
		Fleet: func(path string, demo bool) (*fleet.Fleet, error) {
			if demo {
				return file.Demo()
			}
			return file.Load(path, nil)
		},
		Now: func() time.Time { return testutil.FixedNow },
	}, out
}

// TestOutputsValidate runs each command and validates its real -o json
// output against its committed schema.
func TestOutputsValidate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	cases := []struct {
		schema string
		args   []string
	}{
		{"prices.schema.json", []string{"prices", "--gpu", "H100", "-o", "json"}},
		{"prices.schema.json", []string{"prices", "--provider", "aws", "--region", "us-east-1", "-o", "json"}},
		{"sharing-plan.schema.json", []string{"sharing", "plan", "--demo", "-o", "json"}},
		{"commit-plan.schema.json", []string{"commit-plan", "--demo", "-o", "json"}},
		{"tags-audit.schema.json", []string{"tags", "audit", "--demo", "-o", "json"}},
	}
	for _, c := range cases {
		t.Run(c.schema+" "+c.args[0], func(t *testing.T) {
			f, out := factory(t)
			cmd := root.NewCmdRoot(f)
			cmd.SetArgs(c.args)
			cmd.SetContext(context.Background())
			if err := cmd.Execute(); err != nil {
				t.Fatalf("%v: %v", c.args, err)
			}
			if out.Len() == 0 {
				t.Fatal("no output")
			}
			validate(t, compile(t, c.schema), out.Bytes())
		})
	}
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("output does not match its schema: %v", err)
	}
}
