package arch

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzFunc matches the declaration of a fuzz target.
var fuzzFunc = regexp.MustCompile(`^func (Fuzz[A-Za-z0-9_]*)\(\w+ \*testing\.F\)`)

// repoRoot is the module's root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// fuzzTargets lists the fuzz targets of every package, by package directory
// relative to the root.
func fuzzTargets(t *testing.T, root string) map[string][]string {
	t.Helper()
	targets := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			if m := fuzzFunc.FindStringSubmatch(sc.Text()); m != nil {
				dir, _ := filepath.Rel(root, filepath.Dir(path))
				targets[dir] = append(targets[dir], m[1])
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return targets
}

// TestEveryFuzzTargetHasACommittedCorpus holds the landing gate to
// replaying, not exploring: CI runs no open-ended fuzzing, so each target's
// committed corpus (testdata/fuzz/FuzzXxx, replayed by plain `go test`) is
// what a later change is checked against. Every target has one, every file in
// it is in go's corpus format, and no corpus is left for a target that no
// longer exists.
func TestEveryFuzzTargetHasACommittedCorpus(t *testing.T) {
	root := repoRoot(t)
	targets := fuzzTargets(t, root)
	if len(targets) == 0 {
		t.Fatal("found no fuzz target: the walk is broken")
	}
	n := 0
	for dir, fns := range targets {
		for _, fn := range fns {
			n++
			corpus := filepath.Join(root, dir, "testdata", "fuzz", fn)
			entries, err := os.ReadDir(corpus)
			if err != nil || len(entries) == 0 {
				t.Errorf("%s: %s has no committed corpus in %s: run `make fuzz RUN=%s KEEP=8` and commit the inputs it copies there (docs/contributing.md)",
					dir, fn, filepath.Join(dir, "testdata", "fuzz", fn), fn)
				continue
			}
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(corpus, e.Name()))
				if err != nil {
					t.Errorf("%s/%s: %v", fn, e.Name(), err)
					continue
				}
				if !bytes.HasPrefix(data, []byte("go test fuzz v1\n")) {
					t.Errorf("%s: corpus file %s is not in go's corpus format (first line \"go test fuzz v1\")", filepath.Join(dir, "testdata", "fuzz", fn), e.Name())
				}
			}
		}
	}
	// A corpus whose target was renamed or removed is replayed by nothing.
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case ".git", "node_modules", "vendor":
			return filepath.SkipDir
		}
		if filepath.Base(filepath.Dir(path)) != "fuzz" || filepath.Base(filepath.Dir(filepath.Dir(path))) != "testdata" {
			return nil
		}
		pkgDir, _ := filepath.Rel(root, filepath.Dir(filepath.Dir(filepath.Dir(path))))
		if !slices.Contains(targets[pkgDir], d.Name()) {
			t.Errorf("%s: corpus for %s, which no test in %s declares", path[len(root)+1:], d.Name(), pkgDir)
		}
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d fuzz targets, each with a committed corpus", n)
}

// TestCIExploresNothing keeps open-ended fuzzing out of the landing gate: a
// random search there makes finished work wait on luck. `make fuzz` is for
// developers (docs/contributing.md).
func TestCIExploresNothing(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		code, _, _ := strings.Cut(line, "#")
		if strings.Contains(code, "fuzz") {
			t.Errorf(".ci/run:%d runs fuzzing: %q; CI replays the committed corpora through go test only", i+1, strings.TrimSpace(line))
		}
	}
}
