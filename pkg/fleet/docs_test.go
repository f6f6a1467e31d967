package fleet

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const formatDoc = "../../docs/fleet-format.md"

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocExamplesParse parses every complete fleet in docs/fleet-format.md and
// checks that the full example is what Marshal writes for testdata/fleets/full.json.
func TestDocExamplesParse(t *testing.T) {
	doc := string(readFile(t, formatDoc))
	n := 0
	for _, m := range yamlBlock.FindAllStringSubmatch(doc, -1) {
		if !strings.HasPrefix(m[1], "apiVersion:") {
			continue
		}
		n++
		if _, err := Parse("example.yaml", []byte(m[1])); err != nil {
			t.Errorf("%v\n%s", err, m[1])
		}
	}
	if n < 2 {
		t.Errorf("found %d complete examples, want the minimal and the full one", n)
	}
	f, err := Parse("full.json", readFile(t, filepath.Join(fleetsDir, "full.json")))
	if err != nil {
		t.Fatal(err)
	}
	full, err := Marshal(f, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "```yaml\n"+string(full)+"```") {
		t.Errorf("%s: the full example is not testdata/fleets/full.json as YAML:\n%s", formatDoc, full)
	}
}

// TestDocErrorMessages checks that the documented message of every invalid
// fixture is the one Parse gives.
func TestDocErrorMessages(t *testing.T) {
	doc := string(readFile(t, formatDoc))
	paths, err := filepath.Glob(filepath.Join(fleetsDir, "invalid", "*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no invalid fixtures: %v", err)
	}
	for _, path := range paths {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(name, data)
		if err == nil {
			t.Errorf("%s parses", name)
			continue
		}
		if !strings.Contains(doc, "\n"+err.Error()+"\n") {
			t.Errorf("%s does not show the message of %s:\n%s", formatDoc, name, err)
		}
	}
}
