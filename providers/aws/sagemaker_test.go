package aws

import (
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// ml.* types: the catalog's GPUs by the EC2 type; CPU-only types are left
// out; a type the catalog lacks is kept (hardware unknown) when its family
// is, or looks like, an accelerator family.
func TestSageMakerHardware(t *testing.T) {
	r := smReader{cat: scanCatalog(t)}
	for _, tc := range []struct {
		typ   string
		keep  bool
		model string
		count float64
	}{
		{"ml.g5.xlarge", true, "A10G", 1},
		{"ml.g5.12xlarge", true, "A10G", 4},
		{"ml.p4d.24xlarge", true, "A100", 8},
		{"ml.g4dn.xlarge", true, "T4", 1},
		{"ml.m5.xlarge", false, "", 0},
		{"ml.t3.medium", false, "", 0},
		{"ml.c5.2xlarge", false, "", 0},
		{"ml.p9.96xlarge", true, "", 0},   // an accelerator family after the catalog
		{"ml.trn9.48xlarge", true, "", 0}, // likewise
		{"ml.geospatial.interactive", false, "", 0},
		{"system", false, "", 0},
	} {
		hw, ok := r.hardwareOf(tc.typ)
		if ok != tc.keep || hw.GPUModel != tc.model || hw.GPUCount != tc.count {
			t.Errorf("%s: keep %v, %s × %v; want %v, %s × %v", tc.typ, ok, hw.GPUModel, hw.GPUCount, tc.keep, tc.model, tc.count)
		}
	}
}

// Items of kinds without a GPU metric are named; endpoints and jobs get
// their series; a stopped item is never asked.
func TestSageMakerQueries(t *testing.T) {
	two := &fleet.Replicas{Current: 2}
	instances := []fleet.Instance{
		{ID: "e", Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Endpoint: "chat", Deployment: "AllTraffic"}},
		{ID: "n", Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}},
		{ID: "a", Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindStudioApp}},
		{ID: "j", Name: "ft", Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindTrainingJob, Replicas: two}},
	}
	q, none := sageMakerQueries(instances, []int{0, 1, 2, 3})
	if len(none) != 2 || none[0] != 1 || none[1] != 2 {
		t.Errorf("without metrics: %v, want the notebook and the app", none)
	}
	var got []string
	for _, x := range q {
		s := *x.metric.Namespace + " " + *x.metric.MetricName
		for _, d := range x.metric.Dimensions {
			s += " " + *d.Name + "=" + *d.Value
		}
		got = append(got, s)
	}
	want := []string{
		"/aws/sagemaker/Endpoints GPUUtilization EndpointName=chat VariantName=AllTraffic",
		"/aws/sagemaker/Endpoints GPUMemoryUtilization EndpointName=chat VariantName=AllTraffic",
		"AWS/SageMaker Invocations EndpointName=chat VariantName=AllTraffic",
		"/aws/sagemaker/TrainingJobs GPUUtilization Host=ft/algo-1",
		"/aws/sagemaker/TrainingJobs GPUMemoryUtilization Host=ft/algo-1",
		"/aws/sagemaker/TrainingJobs GPUUtilization Host=ft/algo-2",
		"/aws/sagemaker/TrainingJobs GPUMemoryUtilization Host=ft/algo-2",
	}
	if len(got) != len(want) {
		t.Fatalf("queries %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("query %d: %s, want %s", i, got[i], want[i])
		}
	}
}

// a2v: SageMaker's sum over GPUs, averaged over hosts, is one GPU's share
// within 0–100 (a spike above the count's 100 % each is clipped).
func TestSageMakerPerGPU(t *testing.T) {
	for _, tc := range []struct {
		sum, hosts float64
		gpus       int
		want       float64
	}{{400, 1, 4, 100}, {124, 1, 4, 31}, {176, 2, 8, 11}, {0, 1, 1, 0}, {450, 1, 4, 100}, {-3, 1, 1, 0}} {
		if got := a2v(tc.sum, tc.hosts, tc.gpus); got != tc.want {
			t.Errorf("a2v(%v, %v, %d) = %v, want %v", tc.sum, tc.hosts, tc.gpus, got, tc.want)
		}
	}
}

// providers.aws.managed_ai is on unless set to false.
func TestManagedAIOption(t *testing.T) {
	for _, tc := range []struct {
		v    providers.Values
		want bool
	}{{nil, true}, {providers.Values{}, true}, {providers.Values{OptManagedAI: true}, true}, {providers.Values{OptManagedAI: false}, false}, {Registration().Defaults(), true}} {
		if got := optionsFrom(tc.v).managedAI; got != tc.want {
			t.Errorf("%v: managed_ai %v, want %v", tc.v, got, tc.want)
		}
	}
}
