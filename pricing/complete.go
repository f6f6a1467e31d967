package pricing

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Complete fills each instance's hardware from the catalog where the fleet
// leaves it out (zero): GPU model, count and per-GPU memory, vCPUs and host
// memory. Values the fleet gives (a file's, or the cloud's own answer in a
// live scan) are kept.
//
// An instance type the catalog does not know is not an error: its instances
// keep what they say of themselves, and UnknownTypes names what is missing.
// Errors are bad input only: a provider that is not a cloud, an empty type
// without the instance's own GPU facts and price, a GPU model that
// contradicts the catalog's. Every problem is reported, joined with
// errors.Join, each naming the instance by index and id; the caller prefixes
// the file name.
func Complete(f *fleet.Fleet, cat Catalog) error {
	return complete(f, cat, false)
}

// CompleteScanned is Complete for a live scan's fleet: the cloud's own
// answer wins, so a GPU model that differs from the catalog's is kept, not
// an error (the catalog fills only what the cloud left out).
func CompleteScanned(f *fleet.Fleet, cat Catalog) error {
	return complete(f, cat, true)
}

func complete(f *fleet.Fleet, cat Catalog, scanned bool) error {
	if f == nil {
		return nil
	}
	if cat == nil {
		return errors.New("no catalog to complete the fleet from")
	}
	var errs []error
	for i := range f.Instances {
		if err := completeInstance(&f.Instances[i], cat, scanned); err != nil {
			errs = append(errs, fmt.Errorf("instances[%d] (id %q): %w", i, f.Instances[i].ID, err))
		}
	}
	return errors.Join(errs...)
}

// typeNames lists a catalog's instance types per provider, once, for "did
// you mean" in the errors of mistyped ones.
type typeNames struct {
	cat   Catalog
	names map[fleet.Provider][]string
}

func (t *typeNames) of(p fleet.Provider) []string {
	if names, ok := t.names[p]; ok {
		return names
	}
	if t.names == nil {
		t.names = map[fleet.Provider][]string{}
	}
	seen := map[string]bool{}
	var names []string
	for _, o := range t.cat.Offers(Query{Provider: p}) {
		if !seen[o.Type.Name] {
			seen[o.Type.Name] = true
			names = append(names, o.Type.Name)
		}
	}
	t.names[p] = names
	return names
}

func completeInstance(in *fleet.Instance, cat Catalog, scanned bool) error {
	selfDescribed := in.GPU.Model != "" && in.GPU.Count > 0 && in.HourlyPrice != nil
	if !in.Provider.Valid() {
		if selfDescribed {
			return nil
		}
		return fmt.Errorf("provider %q is not one of aws, azure, gcp", in.Provider)
	}
	if in.InstanceType == "" {
		if selfDescribed {
			return nil
		}
		return errors.New("instanceType is empty; give it, or give gpu.model, gpu.count and hourlyPrice")
	}
	// A GCP N1 host with attached GPUs is priced as its host and GPUs
	// together (TypeNameOf).
	t, ok := cat.InstanceType(in.Provider, TypeNameOf(cat, in))
	if !ok {
		return nil // UnknownTypes says what is missing
	}
	// A type the catalog gives no GPU (an N1 host, whose GPUs are attached)
	// contradicts no model; nor does the cloud's own answer.
	if in.GPU.Model != "" && t.GPUModel != "" && !scanned && !sameGPU(cat, in.GPU.Model, t.GPUModel) {
		return fmt.Errorf("gpu.model %q contradicts the catalog: %s %s has %s",
			in.GPU.Model, in.Provider, t.Name, t.GPUModel)
	}
	if in.GPU.Model == "" {
		in.GPU.Model = t.GPUModel
	}
	if in.GPU.Count == 0 {
		in.GPU.Count = t.GPUCount
	}
	if in.GPU.MemoryGiB == 0 {
		in.GPU.MemoryGiB = t.GPUMemoryGiB
	}
	if in.VCPUs == 0 {
		in.VCPUs = t.VCPUs
	}
	if in.MemoryGiB == 0 {
		in.MemoryGiB = t.MemoryGiB
	}
	return nil
}

// sameGPU reports whether two model names mean the same GPU: equal ignoring
// case, or resolving to the same spec (GCP's H100-MEGA is an H100).
func sameGPU(cat Catalog, a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	ga, okA := cat.GPU(a)
	gb, okB := cat.GPU(b)
	return okA && okB && strings.EqualFold(ga.Name, gb.Name)
}
