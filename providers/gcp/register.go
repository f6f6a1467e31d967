package gcp

import (
	"embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

func init() { providers.Register(Registration()) }

// The adapter's own options: providers.gcp.<name> in the configuration,
// GPUFINOPS_PROVIDERS_GCP_<NAME> in the environment.
const (
	OptProjects   = "projects"
	OptRateLimits = "rate_limits"
)

// MaxLookbackDays is how long Cloud Monitoring keeps agent metrics (six
// weeks).
const MaxLookbackDays = 42

// projectID is what GCP accepts as a project ID.
var projectID = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

// Registration is what the adapter registers: its options and flags, doctor
// hints, IAM role, the owner labels of GCP services and how GCP sells
// commitments.
func Registration() *providers.RegInfo {
	return &providers.RegInfo{
		Name:        fleet.GCP,
		Description: "Google Cloud: Compute Engine GPU VMs, Ops Agent GPU metrics in Cloud Monitoring, Cloud Billing Catalog prices",
		New:         New,
		Options: []providers.Option{
			{Name: OptProjects, Flag: "project", Default: []string{}, Help: "GCP projects to scan (default: every project the credentials can list)", Validate: func(v any) error {
				for _, p := range v.([]string) {
					if !projectID.MatchString(p) {
						return fmt.Errorf("%q is not a GCP project ID (6–30 lower-case letters, digits and hyphens, starting with a letter)", p)
					}
				}
				return nil
			}},
			{Name: OptManagedAI, Default: true, Help: "read Vertex AI endpoints, custom jobs and Workbench instances (read-only; false turns these reads off)"},
			{Name: OptVertexLocations, Default: []string{}, Help: "Vertex AI locations to read (default: every region the scan reads)"},
			{Name: OptRateLimits, Default: []string{}, Help: "request quotas per API (" + strings.Join(ratelimit.APIs(Quotas), ", ") + ") as API=N/PER[:BURST], or off (default: GCP's documented quotas, docs/performance.md)", Validate: func(v any) error {
				_, err := ratelimit.NewSet(Quotas, v.([]string))
				return err
			}},
		},
		Doctor: providers.DoctorInfo{
			CredentialsFix: "configure Application Default Credentials (see docs/gcp.md and 'gpufinops help environment')",
			Checks: `the credentials (an access token from Application Default Credentials), each
permission the commands need (one cheap read each: the aggregated instance
listing, Cloud Monitoring time series and the Billing Catalog; for idle-stop,
testIamPermissions on an instance), and how many running GPU VMs publish the
Ops Agent's GPU metrics for every GPU (some GPUs only: partial), with the
agent configuration that adds them.`,
		},
		Policy:     Policy(),
		OwnerRules: OwnerRules,
		Purchase:   &providers.Purchase{Plan: pricing.ResourceCUD, Name: "committed use discount"},
		// Labels allow only lower-case letters, digits, '-' and '_'.
		LowercaseTags: true,
		Lookback:      providers.Lookback{MaxDays: MaxLookbackDays, Why: "Cloud Monitoring keeps agent metrics six weeks"},
		Accelerated:   Accelerated,
		Billing:       Billing(),
		Regions:       knownRegions,
		// Vertex AI's changes as gcloud commands (vertex_command.go).
		ManagedCommand: ManagedCommand,
	}
}

// iamDocs holds byte-identical copies of docs/iam/gcp-*.yaml.
//
//go:embed iam/*.yaml
var iamDocs embed.FS

// IAMAnalyze is what the adapter calls to inventory, measure and price a
// fleet: read-only. roles/compute.viewer and roles/monitoring.viewer grant
// it; docs/iam/gcp-analyze.yaml is the custom role with exactly these.
var IAMAnalyze = []providers.Permission{
	{Action: "compute.instances.list", Purpose: "list GPU VMs of every zone (instances.aggregatedList)"},
	{Action: "compute.instances.get", Purpose: "read one VM before stopping it"},
	{Action: "compute.commitments.list", Purpose: "the resource-based committed use discounts held (regionCommitments.aggregatedList), so no advice saves what they already pay for"},
	{Action: "compute.reservations.list", Purpose: "the specific reservations held (reservations.aggregatedList)"},
	{Action: "compute.resourcePolicies.list", Purpose: "which resource policies attached to VMs place them (resourcePolicies.aggregatedList): hosts of one placement or workload policy are kept together, a shared schedule groups nothing"},
	{Action: "compute.machineTypes.get", Purpose: "the GPUs, vCPUs and memory of accelerator-optimized machine types"},
	{Action: "compute.regions.list", Purpose: "find the project's regions"},
	{Action: "monitoring.timeSeries.list", Purpose: "read the Ops Agent's GPU and GPU memory metrics and host CPU"},
	{Action: "resourcemanager.projects.get", Purpose: "list the projects the credentials can scan"},
	{Action: "aiplatform.endpoints.list", Purpose: "Vertex AI endpoints and the machines of their deployed models (providers.gcp.managed_ai)"},
	{Action: "aiplatform.customJobs.list", Purpose: "running Vertex AI custom training jobs and their GPU worker pools (providers.gcp.managed_ai)"},
	{Action: "notebooks.instances.list", Purpose: "Vertex AI Workbench instances, to tell their VMs apart as notebooks (providers.gcp.managed_ai)"},
}

// IAMIdleStop is what idle-stop adds: stopping VMs labelled
// autoshutdown=true, never members of a managed instance group or GKE.
var IAMIdleStop = []providers.Permission{
	{Action: "compute.instances.stop", Purpose: "stop idle VMs (testIamPermissions first checks it in a dry run); never group or GKE members"},
	{Action: "compute.zoneOperations.get", Purpose: "wait for the stop operation to finish"},
	{Action: "notebooks.instances.get", Purpose: "read a Workbench instance's state before stopping it"},
	{Action: "notebooks.instances.stop", Purpose: "stop idle Workbench instances through Workbench (which stops their VM)"},
	{Action: "notebooks.operations.get", Purpose: "wait for the Workbench stop operation to finish"},
}

// IAMBilling is the Billing Catalog's access: any credentials with the
// Cloud Billing API enabled on the quota project; no role grants it.
var IAMBilling = []providers.Permission{
	{Action: "cloudbilling.googleapis.com (API enabled)", Purpose: "live list, spot and commitment prices (services.skus.list needs no IAM role)"},
}

// Policy is the adapter's least-privilege custom role.
func Policy() *providers.Policy {
	return &providers.Policy{
		Kind:     "IAM custom role",
		Analyze:  IAMAnalyze,
		IdleStop: IAMIdleStop,
		Extra:    IAMBilling,
		Document: func(idleStop bool) ([]byte, error) {
			if idleStop {
				return iamDocs.ReadFile("iam/idle-stop.yaml")
			}
			return iamDocs.ReadFile("iam/analyze.yaml")
		},
		Notes: `The same roles are in docs/iam/ (gcp-analyze.yaml, gcp-idle-stop.yaml), in the
format 'gcloud iam roles create --file' reads. roles/compute.viewer plus
roles/monitoring.viewer also cover analyze:
  $ gpufinops iam-policy gcp -o yaml > gpufinops-analyze.yaml
  $ gcloud iam roles create gpufinopsAnalyze --project PROJECT --file gpufinops-analyze.yaml
  $ gcloud projects add-iam-policy-binding PROJECT --member serviceAccount:SA --role projects/PROJECT/roles/gpufinopsAnalyze`,
	}
}

// Accelerated reports whether a machine type bundles GPUs (a2, a3, a4, a4x,
// g2, g4); N1 machines with attached GPUs bill their GPUs apart.
func Accelerated(machineType string) bool { return bundlesGPUs(strings.ToLower(machineType)) }
