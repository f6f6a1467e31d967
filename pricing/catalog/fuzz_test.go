package catalog

import (
	"io/fs"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
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

// FuzzManagedFiles: any SageMaker markup rows and Vertex AI unit-price rows
// either fail the load with one line naming a file, or load into managed
// offers that hold the money invariants: a SageMaker estimate is its EC2
// price times a markup in [1, 3], a Vertex price is positive; both bounded,
// at most 6 decimal places, and never listed as a virtual machine.
func FuzzManagedFiles(f *testing.F) {
	base := smallData(f)
	head := "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n"
	base["skypilot-aws-gpu.csv"] = &fstest.MapFile{Data: []byte(head +
		"g5.xlarge,A10G,1,4,16,22888,us-east-1,use1-az2,1.006,0.4\ng5.2xlarge,A10G,1,8,32,22888,us-east-1,use1-az2,1.212,\n")}
	base["gcp-gpu-machines-cyclenerd.csv"] = &fstest.MapFile{Data: []byte(head +
		"a3-highgpu-1g,H100,1,26,234,,us-central1,,11.0612499878219,6.32619260273973\n")}
	markupHead := "family,size,markup,basis,evidence\n"
	unitHead := "task,resource,name,region,usdPerHour,sku,description\n"
	for _, s := range [][2]string{
		{"g5,xlarge,1.40,observed,x\n", "prediction,gpu,H100,us-central1,11.2660332,A,x\nprediction,vcpu,a3-highgpu,us-central1,0.0293227,B,x\nprediction,memory,a3-highgpu,us-central1,0.0025534,C,x\n"},
		{"g5,2xlarge,1.25,interpolated,x\ng5,2xlarge,1.25,observed,x\n", "training,gpu,H100,us-central1,-1,A,x\n"},
		{"g5,xlarge,3,observed,x\n", "training,gpu,H100,us-central1,99999,A,x\ntraining,vcpu,a3-highgpu,us-central1,99999,B,x\ntraining,memory,a3-highgpu,us-central1,99999,C,x\n"},
		{"g5,xlarge,1.4e0,observed,\n", "prediction,gpu,h100,US-CENTRAL1,1e-9,A,x\n"},
		{"g4ad,xlarge,1.4,observed,x\n", "\"unterminated"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, markups, units string) {
		m := fstest.MapFS{}
		for k, v := range base {
			m[k] = v
		}
		m[fileSageMakerMarkup] = &fstest.MapFile{Data: []byte(markupHead + markups)}
		m[fileVertexUnits] = &fstest.MapFile{Data: []byte(unitHead + units)}
		c, err := load(m)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, ".csv") && !strings.Contains(msg, ".json") {
				t.Fatalf("error %q is not one line naming a file", msg)
			}
			return
		}
		for _, o := range c.Offers(pricing.Query{}) {
			if o.Type.Service != "" {
				t.Fatalf("VM query lists %s", o.Type.Name)
			}
		}
		for _, s := range []fleet.ManagedService{fleet.SageMaker, fleet.VertexAI} {
			for _, o := range c.Offers(pricing.Query{Service: s}) {
				p := o.OnDemand
				if p == nil || o.Spot != nil || !p.Hourly.IsPositive() || p.Hourly.GreaterThan(maxHourly) || p.Hourly.Exponent() < -pricePlaces {
					t.Fatalf("%s %s = %+v", o.Type.Name, o.Region, p)
				}
				if s != fleet.SageMaker {
					continue
				}
				vm, _ := c.Offer(fleet.AWS, o.Region, strings.TrimPrefix(o.Type.Name, "ml."))
				if vm.OnDemand == nil || p.Hourly.LessThan(vm.OnDemand.Hourly) || p.Hourly.GreaterThan(vm.OnDemand.Hourly.Mul(decimal.NewFromInt(3))) {
					t.Fatalf("%s estimate %s, EC2 %v", o.Type.Name, p.Hourly, vm.OnDemand)
				}
			}
		}
	})
}
