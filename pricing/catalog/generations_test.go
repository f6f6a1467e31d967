package catalog

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// TestPreviousGenerations: the older types real estates still run are known
// and priced.
func TestPreviousGenerations(t *testing.T) {
	c := embeddedForTest(t)
	for _, tc := range []struct {
		p      fleet.Provider
		region string
		names  []string
	}{
		{fleet.AWS, "us-east-1", []string{"g3s.xlarge", "g3.4xlarge", "g3.8xlarge", "g3.16xlarge", "p2.xlarge", "p2.8xlarge", "p2.16xlarge",
			"p3.2xlarge", "p3.16xlarge", "g4ad.xlarge", "inf1.xlarge"}},
		{fleet.Azure, "westeurope", []string{"Standard_NC6s_v3", "Standard_NV12s_v3", "Standard_NV16as_v4",
			"Standard_NV6ads_A10_v5", "Standard_NV12ads_A10_v5", "Standard_NC24ads_A100_v4"}},
		{fleet.Azure, "japaneast", []string{"Standard_NC24ads_A100_v4", "Standard_ND96isr_H200_v5"}},
		{fleet.Azure, "swedencentral", []string{"Standard_ND96isr_H200_v5", "Standard_ND96isr_MI300X_v5"}},
		{fleet.Azure, "eastus", []string{"Standard_ND128isr_NDR_GB200_v6"}},
		{fleet.Azure, "northeurope", []string{"Standard_NC128ds_xl_RTXPRO6000BSE_v6"}},
		{fleet.GCP, "us-central1", []string{"n1-standard-8+2xT4", "n1-highmem-8+1xV100", "n1-standard-16+1xP100", "n1-standard-4+1xP4",
			"a2-ultragpu-8g", "a3-highgpu-8g", "a4-highgpu-8g", "g2-standard-96", "g4-standard-48", "tpu-v5litepod-8"}},
	} {
		for _, name := range tc.names {
			o, ok := c.Offer(tc.p, tc.region, name)
			if !ok || (o.OnDemand == nil && o.Spot == nil) {
				t.Errorf("%s %s %s: not priced (%v)", tc.p, tc.region, name, ok)
			}
		}
	}
	// Incomplete rows never become types with a guessed GPU count.
	if _, ok := c.InstanceType(fleet.Azure, "Standard_NC132ds_xl_RTXPRO6000BSE_v6"); ok {
		t.Error("Standard_NC132ds_xl_RTXPRO6000BSE_v6 has no GPU count in any source, yet it is a type")
	}
	if !hasCorrection(c, fleet.Azure, "Standard_NC132ds_xl_RTXPRO6000BSE_v6", "westeurope", "Offer") {
		t.Error("the left-out RTX PRO 6000 size has no recorded reason")
	}
}

// TestN1AttachedGPUs: "n1-standard-8 + 2 × T4" is priced in a region as the
// N1 host (Billing Catalog) plus the two T4s (SkyPilot's GPU row), and
// pricing.TypeNameOf finds it for an instance as the GCP adapter reports it.
func TestN1AttachedGPUs(t *testing.T) {
	c := embeddedForTest(t)
	in := fleet.Instance{Provider: fleet.GCP, Region: "us-central1", InstanceType: "n1-standard-8", GPU: fleet.GPU{Model: "T4", Count: 2}}
	name := pricing.TypeNameOf(c, &in)
	if name != "n1-standard-8+2xT4" {
		t.Fatalf("TypeNameOf = %q", name)
	}
	o, ok := c.Offer(fleet.GCP, "us-central1", name)
	if !ok || o.OnDemand == nil || o.Spot == nil {
		t.Fatalf("offer = %+v, %v", o, ok)
	}
	// Host 0.379998 (Cyclenerd pricing.yml n1-standard-8 us-central1) + 2 × T4 0.7 (SkyPilot).
	if want := decimal.RequireFromString("1.079998"); !o.OnDemand.Hourly.Equal(want) {
		t.Errorf("on-demand = %s, want %s", o.OnDemand.Hourly, want)
	}
	if o.Type.GPUModel != "T4" || o.Type.GPUCount != 2 || o.Type.VCPUs != 8 || o.Type.MemoryGiB != 30 {
		t.Errorf("type = %+v", o.Type)
	}
	// A configuration GCP does not sell (V100 × 1 takes at most 12 vCPUs)
	// is not offered; a type the catalog knows keeps its own name.
	if _, ok := c.InstanceType(fleet.GCP, "n1-standard-16+1xV100"); ok {
		t.Error("n1-standard-16 with one V100 is offered; GCP allows at most 12 vCPUs with one V100")
	}
	if got := pricing.TypeNameOf(c, &fleet.Instance{Provider: fleet.GCP, InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Model: "A100", Count: 1}}); got != "a2-highgpu-1g" {
		t.Errorf("TypeNameOf(a2-highgpu-1g) = %q", got)
	}
	// Every N1 offer's price is host + GPUs from the two named sources.
	for _, o := range c.Offers(pricing.Query{Provider: fleet.GCP}) {
		if _, _, _, ok := pricing.ParseAttachedTypeName(o.Type.Name); !ok {
			continue
		}
		if !strings.HasPrefix(o.Type.Name, "n1-") || o.OnDemand == nil && o.Spot == nil {
			t.Errorf("%s %s: %+v", o.Region, o.Type.Name, o)
		}
		for _, p := range []*pricing.Price{o.OnDemand, o.Spot} {
			if p != nil && (!strings.Contains(p.Source, "(N1 host)") || !strings.Contains(p.Source, "(GPUs)") || p.InstanceType != o.Type.Name) {
				t.Errorf("%s %s: price %+v", o.Region, o.Type.Name, p)
			}
		}
	}
}

// TestLifecycle: retired and promotional sizes are marked and are never
// move targets; current sizes are.
func TestLifecycle(t *testing.T) {
	c := embeddedForTest(t)
	for _, tc := range []struct {
		name             string
		retired, promo   bool
		retiredSubstring string
	}{
		{"Standard_NC6", true, false, "retired:"},
		{"Standard_NV12", true, false, "retired:"},
		{"Standard_NC6_Promo", true, true, "retired:"},
		{"Standard_NV24_Promo", true, true, "retired:"},
		{"Standard_NC6s_v3", true, false, "retiring:"},
		{"Standard_NV12s_v3", true, false, "retiring:"},
		{"Standard_NV4as_v4", true, false, "retiring:"},
		{"Standard_ND96isr_H200_v5", false, false, ""},
		{"Standard_NC24ads_A100_v4", false, false, ""},
	} {
		ty, ok := c.InstanceType(fleet.Azure, tc.name)
		if !ok {
			t.Errorf("%s unknown", tc.name)
			continue
		}
		if (ty.Retired != "") != tc.retired || (ty.Promo != "") != tc.promo || !strings.HasPrefix(ty.Retired, tc.retiredSubstring) {
			t.Errorf("%s: retired %q promo %q", tc.name, ty.Retired, ty.Promo)
		}
		if ty.MoveTarget() == (tc.retired || tc.promo) {
			t.Errorf("%s: MoveTarget = %v", tc.name, ty.MoveTarget())
		}
		if o, ok := c.Offer(fleet.Azure, "westus2", tc.name); ok && o.Type != ty {
			t.Errorf("%s: the offer's type %+v differs from the catalog's", tc.name, o.Type)
		}
	}
	// Every _Promo size is marked, whatever its series.
	for _, o := range c.Offers(pricing.Query{Provider: fleet.Azure}) {
		if strings.HasSuffix(o.Type.Name, "_Promo") && o.Type.Promo == "" {
			t.Errorf("%s is not marked promotional", o.Type.Name)
		}
	}
}
