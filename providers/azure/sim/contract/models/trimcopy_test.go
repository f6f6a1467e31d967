package models_test

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/providers/azure/sim/contract/models"
)

// TestTrimmedCopyIsItsOwnTrim: trimming the vendored copy again changes
// nothing, so it holds exactly the manifest's operations and what they
// reach (no definition kept that nothing uses, none missing that is not
// pruned), cleaned by the same rules trim.go applies to a checkout.
func TestTrimmedCopyIsItsOwnTrim(t *testing.T) {
	got, err := models.Trim(models.FS, models.FS)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = fs.WalkDir(models.FS, "specification", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		n++
		want, _ := fs.ReadFile(models.FS, p)
		if b, ok := got[p]; !ok {
			t.Errorf("%s is vendored but nothing of the manifest reaches it", p)
		} else if !bytes.Equal(b, want) {
			t.Errorf("%s differs from its trim: regenerate it with trim.go", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Errorf("the trim makes %d files, %d are vendored", len(got), n)
	}
}
