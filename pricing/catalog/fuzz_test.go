package catalog

import (
	"io/fs"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpufinops/gpufinops/pricing"
)

// smallData is the embedded data with every price and commitment file cut
// to its header, so a fuzzed price file loads in a millisecond.
func smallData(f *testing.F) fstest.MapFS {
	f.Helper()
	sub, err := fs.Sub(dataFS, "data")
	if err != nil {
		f.Fatal(err)
	}
	m := fstest.MapFS{}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		f.Fatal(err)
	}
	cut := map[string]bool{fileLifecycle: true, fileCorrections: true, fileRadarTrace: true}
	for _, pf := range priceFiles {
		cut[pf.file] = true
	}
	for _, c := range commitmentFiles {
		cut[c] = true
	}
	for _, e := range entries {
		b, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			f.Fatal(err)
		}
		if cut[e.Name()] {
			b = b[:strings.IndexByte(string(b), '\n')+1]
		}
		m[e.Name()] = &fstest.MapFile{Data: b}
	}
	return m
}

// FuzzPriceFile: any rows in a whole-row price file (here the Azure
// all-regions file) either fail the load with one line naming the file, or
// load into offers whose numbers are sane: a positive, bounded GPU count,
// prices in [0, 100,000] with at most 6 decimal places, spot below
// on-demand, one offer per key. Nothing panics.
func FuzzPriceFile(f *testing.F) {
	base := smallData(f)
	head := "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n"
	for _, s := range []string{
		"Standard_NC12s_v3,V100,2,12,224,,australiaeast,,8.468,1.564886\n",
		"Standard_ND96isr_H200_v5,H200,8,96,1850,,westus3,,84.8,84.8\n",
		"Standard_NV6ads_A10_v5,A10,0.167,6,55,,eastus,,0.454,\n",
		"Standard_X,,,,,,westeurope,,1,\n",
		"Standard_NC6,K80,1,6,56,,eastus,,0.9,\nStandard_NC6,K80,1,6,56,,eastus,,0.8,\n",
		"Standard_NC6,K80,NaN,6,56,,eastus,,1e12,-1\n",
		"Standard_NC6,K80,1,6,56,,eastus,,88.4899999025753,0.1\n",
		"a,Nope,1,1,1,,r,,1,\n\"unterminated",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rows string) {
		m := fstest.MapFS{}
		for k, v := range base {
			m[k] = v
		}
		m["azure-gpu-allregions.csv"] = &fstest.MapFile{Data: []byte(head + rows)}
		c, err := load(m)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, ".csv") && !strings.Contains(msg, ".json") {
				t.Fatalf("error %q is not one line naming a file", msg)
			}
			return
		}
		seen := map[offerKey]bool{}
		for _, o := range c.Offers(pricing.Query{}) {
			k := offerKeyOf(o.Type.Provider, o.Region, o.Type.Name)
			if seen[k] {
				t.Fatalf("two offers for %v", k)
			}
			seen[k] = true
			if n := o.Type.GPUCount; !(n > 0) || n > 64 || math.IsInf(n, 0) || o.Type.VCPUs < 0 || math.IsNaN(o.Type.MemoryGiB) {
				t.Fatalf("hardware %+v", o.Type)
			}
			for _, p := range []*pricing.Price{o.OnDemand, o.Spot} {
				if p != nil && (p.Hourly.IsNegative() || p.Hourly.GreaterThan(maxHourly) || p.Hourly.Exponent() < -pricePlaces) {
					t.Fatalf("price %s", p.Hourly)
				}
			}
			if o.OnDemand != nil && o.Spot != nil && !o.Spot.Hourly.LessThan(o.OnDemand.Hourly) {
				t.Fatalf("spot %s ≥ on-demand %s", o.Spot.Hourly, o.OnDemand.Hourly)
			}
		}
	})
}
