package fleetgen

import (
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// serviceCatalog is a catalog that also sells a few SageMaker and Vertex AI
// types, as the catalog does once it prices them.
type serviceCatalog struct{ pricing.Catalog }

func (c serviceCatalog) Offers(q pricing.Query) []pricing.Offer {
	if q.Service == "" {
		return c.Catalog.Offers(q)
	}
	price := func(p fleet.Provider, region, name, model string, n, mem float64, usd string) pricing.Offer {
		return pricing.Offer{Region: region, Type: pricing.InstanceType{Provider: p, Name: name, GPUModel: model, GPUCount: n, GPUMemoryGiB: mem, Service: q.Service},
			OnDemand: &pricing.Price{Provider: p, Region: region, InstanceType: name, Hourly: decimal.RequireFromString(usd)}}
	}
	var out []pricing.Offer
	for _, o := range []pricing.Offer{
		price(fleet.AWS, "us-east-1", "ml.g5.xlarge", "A10G", 1, 24, "1.41"),
		price(fleet.AWS, "us-east-1", "ml.g5.12xlarge", "A10G", 4, 24, "7.09"),
		price(fleet.AWS, "us-west-2", "ml.g6.xlarge", "L4", 1, 24, "1.127"),
		price(fleet.GCP, "us-central1", "vertex-ai/prediction/a3-highgpu-1g", "H100", 1, 80, "12.63"),
		price(fleet.GCP, "us-central1", "vertex-ai/prediction/n1-standard-8+1xNVIDIA_TESLA_T4", "T4", 1, 16, "0.73"),
		price(fleet.GCP, "us-central1", "vertex-ai/training/a3-highgpu-8g", "H100", 8, 80, "101.0"),
	} {
		if o.Type.Service == q.Service && (q.Service == fleet.SageMaker) == (o.Type.Provider == fleet.AWS) && (q.Region == "" || q.Region == o.Region) {
			out = append(out, o)
		}
	}
	return out
}

// The IDs each kind of each service has in the cloud (the fleet format's
// conventions, docs/managed-ai.md).
var managedIDs = map[string]*regexp.Regexp{
	"sagemaker/endpoint":       regexp.MustCompile(`^arn:aws:sagemaker:[a-z0-9-]+:\d{12}:endpoint/[^/]+/variant/[^/]+$`),
	"sagemaker/notebook":       regexp.MustCompile(`^arn:aws:sagemaker:[a-z0-9-]+:\d{12}:notebook-instance/[^/]+$`),
	"sagemaker/studio-app":     regexp.MustCompile(`^arn:aws:sagemaker:[a-z0-9-]+:\d{12}:app/d-[0-9a-z]+/[^/]+/JupyterLab/[^/]+$`),
	"sagemaker/training-job":   regexp.MustCompile(`^arn:aws:sagemaker:[a-z0-9-]+:\d{12}:training-job/[^/]+$`),
	"azure-ml/endpoint":        regexp.MustCompile(`^/subscriptions/[0-9a-f-]{36}/resourceGroups/[^/]+/providers/Microsoft\.MachineLearningServices/workspaces/[^/]+/onlineEndpoints/[^/]+/deployments/[^/]+$`),
	"azure-ml/notebook":        regexp.MustCompile(`^/subscriptions/[0-9a-f-]{36}/resourceGroups/[^/]+/providers/Microsoft\.MachineLearningServices/workspaces/[^/]+/computes/[^/]+$`),
	"azure-ml/compute-cluster": regexp.MustCompile(`^/subscriptions/[0-9a-f-]{36}/resourceGroups/[^/]+/providers/Microsoft\.MachineLearningServices/workspaces/[^/]+/computes/[^/]+$`),
	"vertex-ai/endpoint":       regexp.MustCompile(`^projects/[^/]+/locations/[a-z0-9-]+/endpoints/\d+/deployedModels/\d+$`),
	"vertex-ai/notebook":       regexp.MustCompile(`^projects/[^/]+/locations/[a-z0-9-]+-[a-z]/instances/[^/]+$`),
	"vertex-ai/training-job":   regexp.MustCompile(`^projects/[^/]+/locations/[a-z0-9-]+/customJobs/\d+$`),
}

// TestMixedManaged: with a catalog that sells service types, a Mixed fleet
// has managed items of every kind of every service at about the share
// asked, each valid, with its cloud's ID, priced by the catalog, and the
// same fleet from the same seed; the instances that stay VMs are those of
// the fleet without managed items.
func TestMixedManaged(t *testing.T) {
	emb, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cat := serviceCatalog{emb}
	for _, share := range []float64{0, 0.1} {
		o := MixedOptions{Instances: 3000, Seed: 11, RegionCount: 3, Accounts: 2, Regions: []string{"us-east-1", "us-west-2", "eastus", "westus2", "us-central1"}, ManagedShare: share}
		f, err := Mixed(o, cat)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		if g, _ := Mixed(o, cat); !reflect.DeepEqual(f, g) {
			t.Fatal("two fleets from one seed differ")
		}
		none := o
		none.ManagedShare = -1
		vms, err := Mixed(none, cat)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		managed := 0
		for i, in := range f.Instances {
			if !in.IsManaged() {
				if !reflect.DeepEqual(in, vms.Instances[i]) {
					t.Fatalf("instance %d is not the fleet's without managed items", i)
				}
				continue
			}
			if vms.Instances[i].IsManaged() {
				t.Fatalf("share -1 drew a managed item")
			}
			managed++
			m := in.Managed
			key := string(m.Service) + "/" + string(m.Kind)
			kinds[key]++
			re, ok := managedIDs[key]
			if !ok || !re.MatchString(in.ID) {
				t.Errorf("%s id %q", key, in.ID)
			}
			if m.Kind == fleet.KindEndpoint && (m.Replicas.Current < 1 || m.Replicas.Current > 4 || m.Requests == nil) {
				t.Errorf("%s: replicas %d, requests %v", in.ID, m.Replicas.Current, m.Requests)
			}
			if in.State != fleet.Running || in.Lifecycle != fleet.OnDemand || in.ManagedBy != nil || !(in.GPU.Count >= 1) {
				t.Errorf("%s: state %s lifecycle %s owner %v gpus %v", in.ID, in.State, in.Lifecycle, in.ManagedBy, in.GPU.Count)
			}
			if _, ok := cat.Offer(in.Provider, in.Region, in.PriceKey()); !ok && m.Service == fleet.AzureML {
				t.Errorf("%s: %s not priced in %s", in.ID, in.PriceKey(), in.Region)
			}
			if m.Service == fleet.VertexAI && m.Kind != fleet.KindNotebook && !strings.HasPrefix(m.PriceType, "vertex-ai/") {
				t.Errorf("%s: price type %q", in.ID, m.PriceType)
			}
			if m.Service == fleet.SageMaker && !strings.HasPrefix(in.InstanceType, "ml.") {
				t.Errorf("%s: type %q", in.ID, in.InstanceType)
			}
		}
		want := share
		if want == 0 {
			want = DefaultManagedShare
		}
		got := float64(managed) / float64(len(f.Instances))
		if math.Abs(got-want) > want/3 {
			t.Errorf("share %v: %.3f of the instances are managed, want about %.3f", share, got, want)
		}
		if share == 0.1 && len(kinds) != len(managedIDs) {
			t.Errorf("kinds drawn %v, want all %d", kinds, len(managedIDs))
		}
		t.Logf("share %v: %d managed of %d: %v", share, managed, len(f.Instances), kinds)
	}
}

// Every managed item is drawn at a type the catalog prices under its price
// key (an ml.* estimate, a Vertex AI SKU sum, an Azure ML or Workbench VM
// price), and the VMs are those of the same fleet without managed items; a
// share above 1 or NaN is an error.
func TestMixedManagedPriced(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Mixed(MixedOptions{Instances: 2000, Seed: 3, RegionCount: 2, ManagedShare: 0.2}, cat)
	if err != nil {
		t.Fatal(err)
	}
	vms, err := Mixed(MixedOptions{Instances: 2000, Seed: 3, RegionCount: 2, ManagedShare: -1}, cat)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, in := range f.Instances {
		if !in.IsManaged() && !reflect.DeepEqual(in, vms.Instances[i]) {
			t.Fatalf("instance %d is not the fleet's without managed items", i)
		}
		if m := in.Managed; m != nil {
			n++
			if o, ok := cat.Offer(in.Provider, in.Region, in.PriceKey()); !ok || o.OnDemand == nil {
				t.Fatalf("%s: %s %s drawn without a price for it", in.ID, m.Service, in.PriceKey())
			}
		}
	}
	if n == 0 {
		t.Fatal("no managed item")
	}
	for _, s := range []float64{1.5, math.NaN()} {
		if _, err := Mixed(MixedOptions{Instances: 1, ManagedShare: s}, cat); err == nil {
			t.Errorf("share %v: no error", s)
		}
	}
}
