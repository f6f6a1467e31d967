package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// DefaultManagedShare is the share of a Mixed fleet's instances drawn as
// items of managed AI services (MixedOptions.ManagedShare 0): SageMaker
// endpoints (1–4 replicas), notebooks, Studio apps and training jobs; Azure
// ML online deployments, compute instances and compute clusters; Vertex AI
// endpoints and custom jobs and Workbench instances.
const DefaultManagedShare = 0.03

// managedDraw makes some of a Mixed fleet's instances managed items. It
// draws from its own generator, so the other instances are the seed's as
// without it, and only from types the catalog prices: SageMaker's ml.*
// types and Vertex AI's priced machines where the catalog sells them,
// Azure ML and Workbench at their VM's price. An instance with no such type
// stays a VM.
type managedDraw struct {
	share float64
	r     *rand.Rand
	// offers are the service-priced types by service, in the regions the
	// fleet uses.
	offers map[fleet.ManagedService][]pricing.Offer
}

func newManagedDraw(o MixedOptions, cat pricing.Catalog, byCloud map[fleet.Provider][]offerShape) *managedDraw {
	share := o.ManagedShare
	if share == 0 {
		share = DefaultManagedShare
	}
	if share < 0 {
		return nil
	}
	m := &managedDraw{share: min(share, 1), r: rand.New(rand.NewPCG(o.Seed^0x4d414e41, o.Seed+35)), offers: map[fleet.ManagedService][]pricing.Offer{}}
	for svc, p := range map[fleet.ManagedService]fleet.Provider{fleet.SageMaker: fleet.AWS, fleet.VertexAI: fleet.GCP} {
		regions := map[string]bool{}
		for _, s := range byCloud[p] {
			regions[s.region] = true
		}
		for _, of := range cat.Offers(pricing.Query{Provider: p, Service: svc}) {
			if of.OnDemand != nil && of.Type.GPUCount >= 1 && of.Type.GPUModel != "" && regions[of.Region] {
				m.offers[svc] = append(m.offers[svc], of)
			}
		}
	}
	return m
}

func (m *managedDraw) pick(n int) int { return m.r.IntN(n) }

// apply turns the i-th instance into a managed item, or leaves it a VM. It
// draws the same number of times for every instance.
func (m *managedDraw) apply(in *fleet.Instance, i int, sh offerShape) {
	if m == nil {
		return
	}
	draw, kindDraw, replicas, idle, offer := m.r.Float64(), m.pick(100), 1+m.pick(4), m.r.Float64() < 0.35, m.pick(1<<30)
	if draw >= m.share {
		return
	}
	// The VM type's GPUs (Mixed leaves them to pricing.Complete), before a
	// service's type replaces them.
	gpu := in.GPU
	in.GPU = fleet.GPU{Model: sh.typ.GPUModel, Count: sh.typ.GPUCount, MemoryGiB: sh.typ.GPUMemoryGiB}
	defer func() {
		if !in.IsManaged() {
			in.GPU = gpu // it stays the VM it was
		}
	}()
	switch in.Provider {
	case fleet.AWS:
		m.sagemaker(in, i, kindDraw, replicas, idle, offer)
	case fleet.Azure:
		m.azureML(in, i, kindDraw, replicas, idle)
	case fleet.GCP:
		m.vertex(in, i, kindDraw, replicas, idle, offer)
	}
}

// becomes makes in the managed item m of the kind, with the utilization of
// its use.
func becomes(in *fleet.Instance, m *fleet.Managed, idle bool) {
	in.Managed = m
	in.ManagedBy = nil
	in.Lifecycle, in.SpotInterruption = fleet.OnDemand, ""
	in.State = fleet.Running
	in.Usage = fleet.Usage{}
	for k := range in.Tags {
		if strings.HasPrefix(k, "aws:") || strings.HasPrefix(k, "aks-") {
			delete(in.Tags, k)
		}
	}
	switch m.Kind {
	case fleet.KindEndpoint:
		in.Workload = &fleet.Workload{Type: fleet.Inference}
		req := 0.0
		if !idle {
			req = float64(1000 * (1 + len(in.ID)%97))
		}
		m.Requests = &req
	case fleet.KindTrainingJob:
		b := true
		in.Workload = &fleet.Workload{Type: fleet.Training, Checkpoints: &b}
	default:
		in.Workload = &fleet.Workload{Type: fleet.Development}
	}
	if idle && in.Utilization != nil && in.Utilization.GPU != nil {
		in.Utilization.GPU = &fleet.Stats{Avg: 0, P95: 0, Max: 0}
	}
	if in.Tags != nil {
		in.Tags["workload-pattern"] = "managed-" + string(m.Kind)
	}
}

func (m *managedDraw) sagemaker(in *fleet.Instance, i, kindDraw, replicas int, idle bool, offer int) {
	offers := m.offers[fleet.SageMaker]
	if len(offers) == 0 {
		return
	}
	of := offers[offer%len(offers)]
	setType(in, of)
	arn := fmt.Sprintf("arn:aws:sagemaker:%s:%s:", in.Region, in.Account)
	mg := &fleet.Managed{Service: fleet.SageMaker, Replicas: &fleet.Replicas{Current: 1}}
	switch {
	case kindDraw < 45:
		mg.Kind, mg.Endpoint, mg.Deployment = fleet.KindEndpoint, fmt.Sprintf("ep-%d", i), "AllTraffic"
		mg.Replicas.Current = replicas
		in.ID = arn + "endpoint/" + mg.Endpoint + "/variant/AllTraffic"
	case kindDraw < 75:
		mg.Kind = fleet.KindNotebook
		in.ID = arn + fmt.Sprintf("notebook-instance/nb-%d", i)
		if in.Utilization != nil {
			in.Utilization.Source = "prometheus" // SageMaker publishes none for notebooks
		}
	case kindDraw < 85:
		mg.Kind, mg.Workspace = fleet.KindStudioApp, fmt.Sprintf("d-%012x", i)
		in.ID = arn + fmt.Sprintf("app/%s/user%d/JupyterLab/default", mg.Workspace, i)
		in.Utilization = nil // SageMaker publishes no GPU metric for Studio apps
	default:
		mg.Kind = fleet.KindTrainingJob
		mg.Replicas.Current = min(replicas, 2)
		in.ID = arn + fmt.Sprintf("training-job/job-%d", i)
	}
	becomes(in, mg, idle)
}

func (m *managedDraw) azureML(in *fleet.Instance, i, kindDraw, replicas int, idle bool) {
	ws := fmt.Sprintf("ws-%d", i%7)
	base := fmt.Sprintf("/subscriptions/%s/resourceGroups/ml-rg-%d/providers/Microsoft.MachineLearningServices/workspaces/%s", in.Account, i%7, ws)
	mg := &fleet.Managed{Service: fleet.AzureML, Workspace: ws, Replicas: &fleet.Replicas{Current: 1}}
	switch {
	case kindDraw < 40:
		mg.Kind, mg.Endpoint, mg.Deployment = fleet.KindEndpoint, fmt.Sprintf("ep-%d", i), "blue"
		mg.Replicas.Current = replicas
		in.ID = base + "/onlineEndpoints/" + mg.Endpoint + "/deployments/blue"
	case kindDraw < 75:
		mg.Kind = fleet.KindNotebook
		in.ID = base + fmt.Sprintf("/computes/ci-%d", i)
		off := 0.0
		mg.IdleShutdownMinutes = &off
	default:
		mg.Kind = fleet.KindComputeCluster
		lo, hi := replicas%3, 4+replicas
		mg.Replicas = &fleet.Replicas{Current: lo, Min: &lo, Max: &hi}
		jobs := 0.0
		if !idle {
			jobs = float64(10 * replicas)
		}
		mg.Jobs = &jobs
		in.ID = base + fmt.Sprintf("/computes/cluster-%d", i)
	}
	becomes(in, mg, idle)
}

func (m *managedDraw) vertex(in *fleet.Instance, i, kindDraw, replicas int, idle bool, offer int) {
	loc := in.Region
	mg := &fleet.Managed{Service: fleet.VertexAI, Workspace: loc, Replicas: &fleet.Replicas{Current: 1}}
	prediction, training := vertexOffers(m.offers[fleet.VertexAI], "prediction"), vertexOffers(m.offers[fleet.VertexAI], "training")
	switch {
	case kindDraw < 40 && len(prediction) > 0:
		of := prediction[offer%len(prediction)]
		setType(in, of)
		in.InstanceType, mg.PriceType = vertexMachine(of.Type.Name), of.Type.Name
		mg.Kind, mg.Endpoint, mg.Deployment = fleet.KindEndpoint, fmt.Sprintf("%d", 4400000000+i), fmt.Sprintf("%d", 8800+i)
		mg.Replicas.Current = replicas
		mg.Replicas.Min, mg.Replicas.Max = &mg.Replicas.Current, &mg.Replicas.Current
		in.ID = fmt.Sprintf("projects/%s/locations/%s/endpoints/%s/deployedModels/%s", in.Account, loc, mg.Endpoint, mg.Deployment)
	case kindDraw >= 85 && len(training) > 0:
		of := training[offer%len(training)]
		setType(in, of)
		in.InstanceType, mg.PriceType = vertexMachine(of.Type.Name), of.Type.Name
		mg.Kind = fleet.KindTrainingJob
		in.ID = fmt.Sprintf("projects/%s/locations/%s/customJobs/%d", in.Account, loc, 5550000+i)
	default:
		// A Workbench instance is a Compute Engine VM in the project, priced
		// as that VM.
		mg.Kind = fleet.KindNotebook
		in.Zone = in.Region + "-a"
		mg.Workspace = in.Zone
		off := 0.0
		mg.IdleShutdownMinutes = &off
		in.ID = fmt.Sprintf("projects/%s/locations/%s/instances/wb-%d", in.Account, in.Zone, i)
	}
	becomes(in, mg, idle)
}

// setType gives in the offer's type, region and GPU facts; samples drawn
// for another GPU count become summary statistics.
func setType(in *fleet.Instance, of pricing.Offer) {
	in.InstanceType, in.Region = of.Type.Name, of.Region
	if u := in.Utilization; u != nil && len(u.Samples) > 0 && of.Type.GPUCount != in.GPU.Count {
		u.Samples = nil
		u.GPU = &fleet.Stats{Avg: 20, P95: 40, Max: 60}
	}
	in.GPU = fleet.GPU{Model: of.Type.GPUModel, Count: of.Type.GPUCount, MemoryGiB: of.Type.GPUMemoryGiB}
}

// vertexOffers are the Vertex AI offers of one use, named
// vertex-ai/<use>/<machine>[+<n>x<ACCELERATOR>].
func vertexOffers(offers []pricing.Offer, use string) []pricing.Offer {
	return slices.DeleteFunc(slices.Clone(offers), func(o pricing.Offer) bool {
		return !strings.HasPrefix(o.Type.Name, "vertex-ai/"+use+"/")
	})
}

// vertexMachine is the machine type of a Vertex AI price name.
func vertexMachine(name string) string {
	parts := strings.Split(name, "/")
	m, _, _ := strings.Cut(parts[len(parts)-1], "+")
	return m
}
