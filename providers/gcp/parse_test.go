package gcp

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"cloud.google.com/go/billing/apiv1/billingpb"
	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/genproto/googleapis/type/money"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// TestMoneyIsExact: units + nanos become the decimal they spell, digit for
// digit, for any values (no float on the way).
func TestMoneyIsExact(t *testing.T) {
	for _, tc := range []struct {
		units int64
		nanos int32
		want  string
	}{{0, 350000000, "0.35"}, {2, 933908000, "2.933908"}, {0, 1, "0.000000001"}, {12, 0, "12"}, {-1, -500000000, "-1.5"}} {
		if got := Money(tc.units, tc.nanos).String(); got != tc.want {
			t.Errorf("Money(%d, %d) = %s, want %s", tc.units, tc.nanos, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		units, nanos := r.Int64N(1e6), int32(r.IntN(1e9))
		want := strings.TrimRight(strings.TrimRight(strconv.FormatInt(units, 10)+"."+leftPad(nanos), "0"), ".")
		if got := Money(units, nanos).String(); got != want {
			t.Fatalf("Money(%d, %d) = %s, want %s", units, nanos, got, want)
		}
	}
}

func leftPad(n int32) string {
	s := strconv.Itoa(int(n))
	return strings.Repeat("0", 9-len(s)) + s
}

// sku is a Compute Engine SKU with one hourly price.
func sku(desc, group, usage, unit string, units int64, nanos int32, regions ...string) *billingpb.Sku {
	return &billingpb.Sku{
		Description:    desc,
		Category:       &billingpb.Category{ServiceDisplayName: "Compute Engine", ResourceFamily: "Compute", ResourceGroup: group, UsageType: usage},
		ServiceRegions: regions,
		PricingInfo: []*billingpb.PricingInfo{{PricingExpression: &billingpb.PricingExpression{
			UsageUnit:   unit,
			TieredRates: []*billingpb.PricingExpression_TierRate{{StartUsageAmount: 0, UnitPrice: &money.Money{CurrencyCode: "USD", Units: units, Nanos: nanos}}},
		}}},
	}
}

func TestSKURates(t *testing.T) {
	for _, tc := range []struct {
		sku    *billingpb.Sku
		kind   string
		family string
		model  string
		option pricing.Option
	}{
		{sku("Nvidia Tesla A100 GPU running in Americas", "GPU", "OnDemand", "h", 2, 933908000, "us-central1"), "gpu", "", "A100", pricing.OnDemand},
		{sku("Nvidia Tesla A100 80GB GPU running in Netherlands", "GPU", "OnDemand", "h", 3, 0, "europe-west4"), "gpu", "", "A100-80GB", pricing.OnDemand},
		{sku("Nvidia H100 80GB Mega GPU running in Americas", "GPU", "OnDemand", "h", 11, 0, "us-central1"), "gpu", "", "H100-MEGA", pricing.OnDemand},
		{sku("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas", "GPU", "OnDemand", "h", 0, 140000000, "us-central1"), "gpu", "", "T4", pricing.Spot},
		{sku("Commitment v1: Nvidia L4 GPU in Americas for 3 Year", "GPU", "Commit3Yr", "h", 0, 250000000, "us-central1"), "gpu", "", "L4", pricing.SavingsPlan3y},
		{sku("A2 Instance Core running in Americas", "CPU", "OnDemand", "h", 0, 31611000, "us-central1"), "core", "a2", "", pricing.OnDemand},
		{sku("Spot Preemptible G2 Instance Ram running in Belgium", "RAM", "Preemptible", "GiBy.h", 0, 1234000, "europe-west1"), "ram", "g2", "", pricing.Spot},
		{sku("Commitment v1: A3 Cpu in Americas for 1 Year", "CPU", "Commit1Yr", "h", 0, 20000000, "us-central1"), "core", "a3", "", pricing.SavingsPlan1y},
	} {
		rates := SKURates(tc.sku, "2026-11-30")
		if len(rates) != 1 {
			t.Errorf("%s: %d rates, want 1", tc.sku.Description, len(rates))
			continue
		}
		r := rates[0]
		want := Money(tc.sku.PricingInfo[0].PricingExpression.TieredRates[0].UnitPrice.Units, tc.sku.PricingInfo[0].PricingExpression.TieredRates[0].UnitPrice.Nanos)
		if r.part.kind != tc.kind || r.part.family != tc.family || r.part.model != tc.model || r.option != tc.option || !r.hourly.Equal(want) || r.region != tc.sku.ServiceRegions[0] {
			t.Errorf("%s: %+v", tc.sku.Description, r)
		}
	}
	for _, s := range []*billingpb.Sku{
		sku("A2 Instance Ram running in Americas", "RAM", "OnDemand", "h", 0, 1, "us-central1"),       // RAM per hour: wrong unit
		sku("Storage PD Capacity", "SSD", "OnDemand", "GiBy.mo", 0, 170000000, "us-central1"),         // not a machine part
		sku("Nvidia Tesla A100 GPU running in Americas", "GPU", "OnDemand", "h", 0, 0, "us-central1"), // free: no price
	} {
		if rates := SKURates(s, "2026-11-30"); len(rates) != 0 {
			t.Errorf("%s: %+v, want none", s.Description, rates)
		}
	}
}

func TestGPUModel(t *testing.T) {
	for in, want := range map[string]string{
		"nvidia-tesla-t4": "T4", "nvidia-h200-141gb": "H200", "NVIDIA-L4": "L4", "nvidia-tesla-z9": "Z9", "": "GPU", "nvidia-": "GPU",
		"projects/p/zones/z/acceleratorTypes/x": "PROJECTS/P/ZONES/Z/ACCELERATORTYPES/X",
	} {
		if got := GPUModel(in); got != want {
			t.Errorf("GPUModel(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSKURates: any SKU gives rates that are positive, exactly its first
// tier's price, of a known option and part; never a panic.
func FuzzSKURates(f *testing.F) {
	f.Add("Nvidia Tesla A100 GPU running in Americas", "GPU", "OnDemand", "h", int64(2), int32(933908000))
	f.Add("Spot Preemptible A2 Instance Core running in Americas", "CPU", "Preemptible", "h", int64(0), int32(9000000))
	f.Add("Commitment v1: G2 Ram in Belgium for 3 Years", "RAM", "Commit3Yr", "GiBy.h", int64(0), int32(1000))
	f.Fuzz(func(t *testing.T, desc, group, usage, unit string, units int64, nanos int32) {
		s := sku(desc, group, usage, unit, units, nanos, "us-central1", "us-east1")
		for _, r := range SKURates(s, "2026-11-30") {
			if !r.hourly.IsPositive() || !r.hourly.Equal(Money(units, nanos)) {
				t.Fatalf("%q: rate %s, price %d + %d nanos", desc, r.hourly, units, nanos)
			}
			switch r.part.kind {
			case "gpu":
				if r.part.model == "" {
					t.Fatalf("%q: a GPU rate without a model", desc)
				}
			case "core", "ram":
				if r.part.family == "" || !bundlesGPUs(r.part.family+"-x") && r.part.family != "n1" {
					t.Fatalf("%q: family %q", desc, r.part.family)
				}
			default:
				t.Fatalf("%q: part %+v", desc, r.part)
			}
			if r.option != pricing.OnDemand && r.option != pricing.Spot && r.option != pricing.SavingsPlan1y && r.option != pricing.SavingsPlan3y {
				t.Fatalf("%q: option %q", desc, r.option)
			}
		}
	})
}

// FuzzGPUModel: any accelerator type name gives a non-empty model; the
// known names their catalog model.
func FuzzGPUModel(f *testing.F) {
	for name := range accelerators {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		m := GPUModel(name)
		if m == "" {
			t.Fatalf("GPUModel(%q) is empty", name)
		}
		if want, ok := accelerators[strings.ToLower(strings.TrimSpace(name))]; ok && m != want {
			t.Fatalf("GPUModel(%q) = %q, want %q", name, m, want)
		}
	})
}

// FuzzMachineTypeName: any machine type and zone name is classified without
// a panic, and a zone's region is a prefix of it.
func FuzzMachineTypeName(f *testing.F) {
	for _, s := range []string{"a2-highgpu-1g", "g2-standard-96", "n1-standard-8", "a4x-highgpu-4g", "custom-8-30720", "", "-"} {
		f.Add(s, "us-central1-a")
	}
	f.Fuzz(func(t *testing.T, machineType, zone string) {
		_ = bundlesGPUs(machineType)
		if r := regionOf(zone); !strings.HasPrefix(zone, r) {
			t.Fatalf("regionOf(%q) = %q", zone, r)
		}
	})
}

// TestNoProvisioningModelIsCommitted: a committed use discount shows on no
// VM (covered VMs are STANDARD), and RESERVATION_BOUND binds a VM to a
// reservation's lifecycle: neither is read as committed
// (providers/gcp/sim/FACTS.md).
func TestNoProvisioningModelIsCommitted(t *testing.T) {
	for model, want := range map[string]fleet.Lifecycle{
		"STANDARD": fleet.OnDemand, "RESERVATION_BOUND": fleet.OnDemand, "FLEX_START": fleet.OnDemand, "SPOT": fleet.Spot,
	} {
		if got := lifecycleOf(&computepb.Scheduling{ProvisioningModel: proto.String(model)}); got != want {
			t.Errorf("%s: %s, want %s", model, got, want)
		}
	}
}

// TestMegaGPUKeepsItsRate: the Billing Catalog prices the a3-megagpu's
// H100 ("Nvidia H100 80GB Mega GPU") under SKUs of its own, at another
// rate than the a3-highgpu's H100, so its rates are kept apart although
// the catalog says it is the same GPU; the g4's two spellings of one GPU
// still meet.
func TestMegaGPUKeepsItsRate(t *testing.T) {
	if got := gpuKey("H100-MEGA"); got != "H100-MEGA" {
		t.Errorf("gpuKey(H100-MEGA) = %q", got)
	}
	if got := gpuKey("H100"); got != "H100" {
		t.Errorf("gpuKey(H100) = %q", got)
	}
	if a, b := gpuKey("RTX PRO Server 6000"), gpuKey("RTXPRO6000"); a != b {
		t.Errorf("the g4's GPU is keyed %q from its SKU and %q from the catalog", a, b)
	}
}
