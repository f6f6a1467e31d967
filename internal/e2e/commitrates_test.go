package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// commitRatesFleet: two Azure NC24ads A100 v4 in australiaeast and, in
// GCP's europe-west4, a g2-standard-48 beside a g2-standard-4, all busy all
// month.
var commitRatesFleet = `apiVersion: gpufinops/v1
kind: Fleet
metadata:
  name: commit-rates
  generatedAt: "2026-11-30T00:00:00Z"
instances:
` + commitRatesVM("az-a100-1", "azure", "0b1f6471-1bf0-4dda-aec3-cb9272f09590", "australiaeast", "australiaeast-1", "Standard_NC24ads_A100_v4") +
	commitRatesVM("az-a100-2", "azure", "0b1f6471-1bf0-4dda-aec3-cb9272f09590", "australiaeast", "australiaeast-2", "Standard_NC24ads_A100_v4") +
	commitRatesVM("g2-big", "gcp", "ml-research-eu", "europe-west4", "europe-west4-a", "g2-standard-48") +
	commitRatesVM("g2-small", "gcp", "ml-research-eu", "europe-west4", "europe-west4-b", "g2-standard-4")

func commitRatesVM(id, provider, account, region, zone, typ string) string {
	return `  - id: ` + id + `
    provider: ` + provider + `
    account: "` + account + `"
    region: ` + region + `
    zone: ` + zone + `
    instanceType: ` + typ + `
    lifecycle: on-demand
    state: running
    launchTime: "2026-10-01T08:00:00Z"
    tags: {team: serving, project: chat, environment: prod}
    utilization:
      window: {start: "2026-11-23T00:00:00Z", end: "2026-11-30T00:00:00Z"}
      gpu: {avg: 80, p95: 95, max: 100}
      gpuMemory: {avg: 60, p95: 70, max: 80}
      cpu: {avg: 40, p95: 60, max: 80}
`
}

// TestLiveCommitmentRatesThroughTheSimulators: analyze and commit-plan
// through the SDKs and the simulators. Azure's advice buys the
// reservation at the Retail Prices API's live rate (the Reservation row's
// term total ÷ 8,760 h) and prices the purchase at 2 × that rate; GCP's
// buys the resources the two mixed G2 machines use (52 vCPUs, 208 GiB,
// 5 L4s, where machine counts bought 7 × g2-standard-4) at the Billing
// Catalog's live Commitment v1 unit rates; commit-plan recommends the same
// terms and amounts.
func TestLiveCommitmentRatesThroughTheSimulators(t *testing.T) {
	f, err := fleet.Parse("fleet.yaml", []byte(commitRatesFleet))
	if err != nil {
		t.Fatal(err)
	}
	allCloudsServing(t, f)
	code, out, stderr := gpufinops(t, "analyze", "--provider", "azure,gcp", "-o", "json")
	if code != 0 && code != 3 {
		t.Fatalf("analyze exit %d: %s", code, stderr)
	}
	var rep struct {
		Recommendations []struct {
			ResourceID string `json:"resourceId"`
			Kind       string `json:"kind"`
			Provider   string `json:"provider"`
			Action     string `json:"action"`
			Evidence   struct {
				Purchase struct {
					Term             string          `json:"term"`
					Quantity         int             `json:"quantity"`
					CommitmentHourly decimal.Decimal `json:"commitmentHourly"`
					VCPUs            float64         `json:"vcpus"`
					MemoryGiB        float64         `json:"memoryGiB"`
					GPUs             float64         `json:"gpus"`
					RateSource       string          `json:"rateSource"`
					Live             bool            `json:"live"`
				} `json:"purchase"`
			} `json:"evidence"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	bought := map[string]decimal.Decimal{}
	for _, r := range rep.Recommendations {
		if r.Kind != "commitment" {
			continue
		}
		pu := r.Evidence.Purchase
		if !pu.Live {
			t.Errorf("%s: the rate is not the live one (%s)", r.ResourceID, pu.RateSource)
		}
		bought[r.Provider] = pu.CommitmentHourly
		switch r.Provider {
		case "azure":
			// 30,498.00 USD for the year ÷ 8,760 h, per instance.
			if pu.Quantity != 2 || !pu.CommitmentHourly.Equal(decimal.RequireFromString("6.963014")) || !strings.Contains(pu.RateSource, "Azure Retail Prices API (reservation") ||
				!strings.Contains(r.Action, "2 × $3.481507/h") {
				t.Errorf("%s: buys %d at %s/h from %q (%s); want 2 × the live 3.481507", r.ResourceID, pu.Quantity, pu.CommitmentHourly, pu.RateSource, r.Action)
			}
		case "gcp":
			if pu.VCPUs != 52 || pu.MemoryGiB != 208 || pu.GPUs != 5 || !strings.Contains(r.Action, "--resources=vcpu=52,memory=208GB --resources-accelerator=type=nvidia-l4,count=5") {
				t.Errorf("%s: buys %v vCPUs, %v GiB, %v GPUs (%s); want 52, 208, 5", r.ResourceID, pu.VCPUs, pu.MemoryGiB, pu.GPUs, r.Action)
			}
		}
	}
	if len(bought) != 2 {
		t.Fatalf("commitment advice for %v; want Azure and GCP:\n%s", bought, out)
	}
	code, out, stderr = gpufinops(t, "commit-plan", "--provider", "azure,gcp", "-o", "json")
	if code != 0 && code != 3 {
		t.Fatalf("commit-plan exit %d: %s", code, stderr)
	}
	var plan struct {
		Groups []struct {
			Provider    string `json:"provider"`
			Family      string `json:"family"`
			Recommended string `json:"recommended"`
			Terms       []struct {
				Term      string          `json:"term"`
				PayHourly decimal.Decimal `json:"payHourly"`
			} `json:"terms"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	pays := map[string]decimal.Decimal{}
	for _, g := range plan.Groups {
		for _, tp := range g.Terms {
			if tp.Term == g.Recommended {
				if tp.Term != "1y" {
					t.Errorf("%s %s: commit-plan recommends %s; analyze bought 1y", g.Provider, g.Family, tp.Term)
				}
				pays[g.Provider] = pays[g.Provider].Add(tp.PayHourly)
			}
		}
	}
	for p, b := range bought {
		if !pays[p].Equal(b) {
			t.Errorf("%s: commit-plan buys %s/h, analyze %s/h", p, pays[p], b)
		}
	}
}
