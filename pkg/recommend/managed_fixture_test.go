package recommend

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// fixtureCatalog prices every item of testdata/fleets/managed-ai.yaml: the
// SageMaker prices of shared/data/managed-ai/aws-sagemaker.csv (us-east-1),
// the Azure VM prices of azure-ml.csv, and Vertex AI and Compute Engine
// prices of this test's own.
func fixtureCatalog() *pricingtest.Catalog {
	c := &pricingtest.Catalog{}
	add := func(p fleet.Provider, region, name, gpu string, n, mem float64, svc fleet.ManagedService, hourly string) {
		c.AddOffer(pricing.InstanceType{Provider: p, Name: name, GPUModel: gpu, GPUCount: n, GPUMemoryGiB: mem, Service: svc}, region, hourly, "")
	}
	add(fleet.AWS, "us-east-1", "ml.g5.12xlarge", "A10G", 4, 24, fleet.SageMaker, "7.09")
	add(fleet.AWS, "us-east-1", "ml.g5.2xlarge", "A10G", 1, 24, fleet.SageMaker, "1.515")
	add(fleet.AWS, "us-east-1", "ml.g5.xlarge", "A10G", 1, 24, fleet.SageMaker, "1.41")
	add(fleet.AWS, "us-east-1", "ml.g4dn.xlarge", "T4", 1, 16, fleet.SageMaker, "0.736")
	add(fleet.AWS, "us-east-1", "ml.g6.xlarge", "L4", 1, 24, fleet.SageMaker, "1.127")
	add(fleet.AWS, "us-east-1", "ml.p4d.24xlarge", "A100", 8, 40, fleet.SageMaker, "25.251")
	add(fleet.AWS, "us-east-1", "g5.xlarge", "A10G", 1, 24, "", "1.006")
	add(fleet.GCP, "us-central1", "vertex-ai/prediction/a2-highgpu-1g", "A100", 1, 40, fleet.VertexAI, "4.2244")
	add(fleet.GCP, "us-central1", "vertex-ai/training/a2-highgpu-8g", "A100", 8, 40, fleet.VertexAI, "33.79")
	add(fleet.GCP, "us-central1", "g2-standard-8", "L4", 1, 24, "", "0.8536")
	add(fleet.GCP, "us-central1", "g2-standard-4", "L4", 1, 24, "", "0.7067")
	add(fleet.Azure, "eastus", "Standard_NC24ads_A100_v4", "A100-80GB", 1, 80, "", "3.673")
	add(fleet.Azure, "eastus", "Standard_NC4as_T4_v3", "T4", 1, 16, "", "0.526")
	add(fleet.Azure, "eastus", "Standard_NV36ads_A10_v5", "A10", 1, 24, "", "3.2")
	c.AddAdvice(fleet.AWS, "us-east-1", "ml.p4d.24xlarge", pricing.SpotAdvice{SavingsPercent: 70, Source: "test advice", AsOf: "2026-11-01"})
	c.AddAdvice(fleet.GCP, "us-central1", "vertex-ai/training/a2-highgpu-8g", pricing.SpotAdvice{SavingsPercent: 60, Source: "test advice", AsOf: "2026-11-01"})
	return c
}

func loadFixture(t *testing.T) *fleet.Fleet {
	t.Helper()
	data, err := os.ReadFile("../../testdata/fleets/managed-ai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse("managed-ai.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestManagedFixture runs testdata/fleets/managed-ai.yaml and checks each
// item gets the advice its comment describes, with the figures.
func TestManagedFixture(t *testing.T) {
	f := loadFixture(t)
	p := RunWith(f, fixtureCatalog(), DefaultPolicy(), Options{})
	checkSums(t, p)
	checkManaged(t, f, p)
	type step struct {
		action fleet.ManagedAction
		saving string
	}
	spot := func(hourly string, hours int64, pct float64) string {
		h := decimal.RequireFromString(hourly)
		cost := h.Mul(decimal.NewFromInt(hours)).Round(2)
		return cost.Sub(h.Mul(decimal.NewFromFloat(1 - pct)).Round(6).Mul(decimal.NewFromInt(hours)).Round(2)).String()
	}
	want := map[string][]step{
		"chat-demo/AllTraffic":                  {{fleet.ActionDeleteEndpoint, "10351.4"}}, // 7.09 × 730 × 2
		"rerank/primary":                        {{fleet.ActionSetReplicas, "1105.95"}},    // production keeps 3 of 4: 1.515 × 730
		"nb-research-a":                         {{fleet.ActionStopNotebook, "1029.3"}, {fleet.ActionIdleShutdown, "0"}},
		"nb-eval-prod":                          {{fleet.ActionStopNotebook, "0"}}, // protected
		"nb-nometrics":                          {{fleet.ActionIdleShutdown, "0"}}, // no GPU metric
		"d-abc123def456/bob/JupyterLab/default": {{fleet.ActionIdleShutdown, "0"}}, // no GPU metric
		"llama-ft-1128":                         {{fleet.ActionManagedSpot, spot("25.251", 1460, 0.7)}},
		"fraud-scorer/8812":                     {{fleet.ActionDeleteEndpoint, "3083.81"}}, // 4.2244 × 730
		"wb-carol":                              {{fleet.ActionStopNotebook, "623.13"}, {fleet.ActionIdleShutdown, "0"}},
		"train-vision-v7":                       {{fleet.ActionManagedSpot, spot("33.79", 730, 0.6)}},
		"scorer/blue":                           {{fleet.ActionSetReplicas, "5362.58"}}, // 3 → 1: 3.673 × 730 × 2
		"ci-bob":                                {{fleet.ActionStopNotebook, "383.98"}, {fleet.ActionIdleShutdown, "0"}},
		"gpu-cluster":                           {{fleet.ActionSetMinReplicas, "5362.58"}}, // 2 nodes × 3.673 × 730
	}
	for _, in := range f.Instances {
		var got []step
		for _, r := range recsOf(p, in.ID) {
			if r.Change != nil {
				got = append(got, step{r.Change.Action, r.MonthlySavings.String()})
			} else if in.IsManaged() {
				t.Errorf("%s: advice without a change: %s", in.Name, r.Action)
			}
		}
		w, ok := want[in.Name]
		if !in.IsManaged() {
			if len(got) > 0 {
				t.Errorf("VM %s got managed changes %v", in.Name, got)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no expectation", in.Name)
			continue
		}
		if len(got) != len(w) {
			t.Errorf("%s: got %v, want %v", in.Name, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s step %d: got %v, want %v", in.Name, i, got[i], w[i])
			}
		}
	}
	for _, r := range p.Recommendations {
		switch {
		case r.Change == nil:
		case strings.HasSuffix(r.ResourceID, "nb-eval-prod") && (r.Protected == nil || r.Protected.Reason != "production" || r.Protected.PotentialMonthlySavings.String() != "537.28"):
			t.Errorf("nb-eval-prod: %+v", r.Protected)
		case strings.HasSuffix(r.ResourceID, "rerank/variant/primary") && !strings.Contains(r.Action, "autoscaling minimum from 4 to 3"):
			t.Errorf("rerank: %q", r.Action)
		}
	}
	// Every billed replica's GPUs: chat-demo 2 × 4, rerank 4 × 1, llama 2 × 8,
	// scorer 3 × 1, gpu-cluster 2 × 1, train-vision 8, nine one-GPU items,
	// eval-a10 none stated.
	if p.Summary.GPUCount != 50 {
		t.Errorf("summary GPUs %v, want 50", p.Summary.GPUCount)
	}
	var sm int
	for _, w := range p.Warnings {
		if strings.Contains(w.Message, "SageMaker Savings Plans") {
			sm++
		}
	}
	if sm != 1 {
		t.Errorf("%d SageMaker Savings Plans notes, want 1", sm)
	}
}

// Random managed fleets beside VMs: the sums add up, no item saves more
// than it costs, a protected item saves nothing, an item whose requests
// and utilization are unknown saves nothing, and no commitment is bought
// for a managed item.
func TestManagedProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	kinds := []fleet.ManagedKind{fleet.KindEndpoint, fleet.KindNotebook, fleet.KindStudioApp, fleet.KindComputeCluster, fleet.KindTrainingJob}
	for run := 0; run < 300; run++ {
		var ins []fleet.Instance
		for i := 0; i < 1+rng.IntN(8); i++ {
			cl := clouds[rng.IntN(len(clouds))]
			k := kinds[rng.IntN(len(kinds))]
			in := cl.item(string(rune('a'+i)), k, rng.IntN(6))
			in.ID += "-" + string(rune('a'+i))
			if rng.IntN(4) > 0 {
				gpuUtil(float64(rng.IntN(100)))(&in)
				if rng.IntN(3) == 0 {
					c := rng.Float64()
					in.Utilization.Coverage = &c
				}
			}
			if rng.IntN(3) > 0 {
				requests(float64(rng.IntN(3) * 1000))(&in)
			}
			if rng.IntN(2) == 0 {
				n := float64(rng.IntN(2))
				in.Managed.Jobs = &n
			}
			if rng.IntN(2) == 0 {
				n := rng.IntN(4)
				in.Managed.Replicas.Min = &n
			}
			if rng.IntN(3) == 0 {
				v := float64(rng.IntN(3) * 60)
				in.Managed.IdleShutdownMinutes = &v
			}
			in.Managed.ScaleToZero = rng.IntN(3) == 0
			switch rng.IntN(5) {
			case 0:
				in.Tags["Environment"] = "production"
			case 1:
				in.Tags["auto-shutdown-exempt"] = "true"
			}
			launch := managedNow.Add(-time.Duration(rng.IntN(100)) * time.Hour)
			in.LaunchTime = &launch
			ins = append(ins, in)
		}
		ins = append(ins, inst("i-vm", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid))))
		f := &fleet.Fleet{Instances: ins}
		p := runManaged(t, Options{}, ins...)
		for _, r := range p.Recommendations {
			var in *fleet.Instance
			for i := range f.Instances {
				if f.Instances[i].ID == r.ResourceID {
					in = &f.Instances[i]
				}
			}
			if in == nil || !in.IsManaged() || !r.MonthlySavings.IsPositive() {
				continue
			}
			if in.Utilization == nil && in.Managed.Requests == nil && in.Managed.Jobs == nil && r.Kind != KindSpot {
				t.Errorf("run %d: %s saves %s with requests, jobs and utilization unknown (%s)", run, in.ID, r.MonthlySavings, r.Action)
			}
			if r.Kind == KindCommitment {
				t.Errorf("run %d: commitment bought for managed %s", run, in.ID)
			}
		}
		if t.Failed() {
			return
		}
	}
}
