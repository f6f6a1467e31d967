package factory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestFileOrder: instances read back in any order come out in the file's
// order, the same as sorting them by their place in the file.
func TestFileOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 300 {
		n := rng.IntN(40)
		file := make([]fleet.Instance, n)
		for i := range file {
			file[i] = fleet.Instance{ID: fmt.Sprintf("i-%d", i), Name: fmt.Sprint(round)}
		}
		read := slices.Clone(file)
		if rng.IntN(4) > 0 {
			rng.Shuffle(n, func(i, j int) { read[i], read[j] = read[j], read[i] })
		}
		got := fileOrder(slices.Clone(read), file)
		if len(got) != n {
			t.Fatalf("round %d: %d instances, want %d", round, len(got), n)
		}
		for i := range got {
			if got[i].ID != file[i].ID {
				t.Fatalf("round %d: instance %d is %s, want %s (read %v)", round, i, got[i].ID, file[i].ID, ids(read))
			}
		}
	}
}

func ids(in []fleet.Instance) []string {
	out := make([]string, len(in))
	for i := range in {
		out[i] = in[i].ID
	}
	return out
}
