package azure

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

func register() { providers.Register(Registration()) }

// The adapter's own options: providers.azure.<name> in the configuration,
// GPUFINOPS_PROVIDERS_AZURE_<NAME> in the environment.
const (
	OptSubscriptions    = "subscriptions"
	OptMetricsNamespace = "metrics_namespace"
	OptGPUMetric        = "gpu_metric"
	OptGPUMemoryMetric  = "gpu_memory_metric"
	OptMetricsBatch     = "metrics_batch_size"
	OptPageSize         = "page_size"
	OptTestCredential   = "test_credential"
	OptRateLimits       = "rate_limits"
	OptManagedAI        = "managed_ai"
)

// Defaults of the metric options: where Telegraf's azure_monitor output
// puts the nvidia_smi plugin's fields.
const (
	DefaultNamespace       = "Telegraf/nvidia_smi"
	DefaultGPUMetric       = "utilization_gpu"
	DefaultGPUMemoryMetric = "utilization_memory"
	// MaxMetricsBatch is the most resource IDs one metrics:getBatch call takes.
	MaxMetricsBatch = 50
	// MaxPageSize is the most rows one Resource Graph page returns.
	MaxPageSize = 1000
)

// MaxLookbackDays is how long Azure Monitor keeps metrics.
const MaxLookbackDays = 93

var subscriptionID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Registration is what the adapter registers: its options and flags, doctor
// hints, the custom role, the owner tags of Azure services and how Azure
// sells commitments.
func Registration() *providers.RegInfo {
	return &providers.RegInfo{
		Name:        fleet.Azure,
		Description: "Microsoft Azure: GPU VMs from Resource Graph, Telegraf GPU metrics in Azure Monitor, Retail Prices API",
		New:         New,
		Options: []providers.Option{
			{Name: OptSubscriptions, Flag: "subscription", Default: []string{}, Help: "Azure subscription IDs to scan (default: every subscription the credential can list)", Validate: validateSubscriptions},
			{Name: OptMetricsNamespace, Default: DefaultNamespace, Help: "Azure Monitor namespace of the GPU custom metrics", Validate: nonEmpty("an Azure Monitor metric namespace such as " + DefaultNamespace)},
			{Name: OptGPUMetric, Default: DefaultGPUMetric, Help: "metric name of GPU utilization (percent)", Validate: nonEmpty("a metric name such as " + DefaultGPUMetric)},
			{Name: OptGPUMemoryMetric, Default: DefaultGPUMemoryMetric, Help: "metric name of GPU memory utilization (percent)", Validate: nonEmpty("a metric name such as " + DefaultGPUMemoryMetric)},
			{Name: OptMetricsBatch, Default: MaxMetricsBatch, Help: "VMs per metrics:getBatch call", Validate: intRange(1, MaxMetricsBatch)},
			{Name: OptPageSize, Default: MaxPageSize, Help: "rows per Resource Graph page", Validate: intRange(1, MaxPageSize)},
			{Name: OptTestCredential, Default: false, Help: "send a fixed test token instead of DefaultAzureCredential; only with endpoint (a simulator such as cmd/cloudsim)"},
			{Name: OptRateLimits, Default: []string{}, Help: "request quotas per API (" + strings.Join(ratelimit.APIs(Quotas), ", ") + ") as API=N/PER[:BURST], or off (default: Azure's documented quotas, docs/performance.md)", Validate: func(v any) error {
				_, err := ratelimit.NewSet(Quotas, v.([]string))
				return err
			}},
			{Name: OptManagedAI, Default: true, Help: "list Azure Machine Learning managed online deployments, compute instances and compute clusters with GPU sizes (needs Microsoft.MachineLearningServices/workspaces/*/read; false skips them)"},
		},
		Doctor: providers.DoctorInfo{
			CredentialsFix: "sign in with 'az login' or set AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET (see docs/azure.md)",
			Checks: `the credentials (a token for Azure Resource Manager), each read the commands
need (one cheap call each: the subscription, Resource Graph, the VM list,
Resource SKUs, Azure Monitor metrics, the Retail Prices API), whether the
role may deallocate VMs (Microsoft.Authorization permissions of the
subscription), and how many running GPU VMs publish GPU metrics, with the
Telegraf configuration that adds them.`,
		},
		Policy:      Policy(),
		OwnerRules:  OwnerRules,
		Purchase:    &providers.Purchase{Plan: pricing.Reservation, Name: "reservation"},
		Lookback:    providers.Lookback{MaxDays: MaxLookbackDays, Why: "Azure Monitor keeps metrics 93 days"},
		Accelerated: Accelerated,
		// The Azure CLI command of an advised change to an Azure ML item.
		ManagedCommand: ManagedCommand,
		Billing:        Billing(),
		Regions:        knownRegions,
	}
}

func validateSubscriptions(v any) error {
	for _, s := range v.([]string) {
		if !subscriptionID.MatchString(s) {
			return fmt.Errorf("%q is not a subscription ID; want a GUID such as 00000000-0000-0000-0000-000000000000", s)
		}
	}
	return nil
}

func nonEmpty(want string) func(any) error {
	return func(v any) error {
		if strings.TrimSpace(v.(string)) == "" {
			return fmt.Errorf("empty; want %s", want)
		}
		return nil
	}
}

func intRange(lo, hi int) func(any) error {
	return func(v any) error {
		if n := v.(int); n < lo || n > hi {
			return fmt.Errorf("%d is outside %d–%d", n, lo, hi)
		}
		return nil
	}
}

// options are the adapter's own option values.
type options struct {
	subscriptions   []string
	namespace       string
	gpuMetric       string
	gpuMemoryMetric string
	batch           int
	pageSize        int
	testCredential  bool
	rateLimits      []string
	managedAI       bool
}

// optionsFrom reads the adapter's options, defaults filled in.
func optionsFrom(v providers.Values) options {
	o := options{
		subscriptions:   v.Strings(OptSubscriptions),
		namespace:       v.String(OptMetricsNamespace),
		gpuMetric:       v.String(OptGPUMetric),
		gpuMemoryMetric: v.String(OptGPUMemoryMetric),
		batch:           v.Int(OptMetricsBatch),
		pageSize:        v.Int(OptPageSize),
		testCredential:  v.Bool(OptTestCredential),
		rateLimits:      v.Strings(OptRateLimits),
		managedAI:       true,
	}
	if b, set := v[OptManagedAI].(bool); set {
		o.managedAI = b
	}
	if o.namespace == "" {
		o.namespace = DefaultNamespace
	}
	if o.gpuMetric == "" {
		o.gpuMetric = DefaultGPUMetric
	}
	if o.gpuMemoryMetric == "" {
		o.gpuMemoryMetric = DefaultGPUMemoryMetric
	}
	if o.batch <= 0 || o.batch > MaxMetricsBatch {
		o.batch = MaxMetricsBatch
	}
	if o.pageSize <= 0 || o.pageSize > MaxPageSize {
		o.pageSize = MaxPageSize
	}
	return o
}

// roleDocs holds byte-identical copies of docs/iam/azure-*.json.
//
//go:embed iam/*.json
var roleDocs embed.FS

// RoleAnalyze is what the adapter calls to inventory, measure and price a
// fleet: the read actions of Reader and Monitoring Reader it needs.
// docs/iam/azure-analyze.json grants exactly these.
var RoleAnalyze = []providers.Permission{
	{Action: "Microsoft.Compute/skus/read", Purpose: "GPU count of the VM sizes the catalog lacks, and every size's local NVMe disk (Resource SKUs)"},
	{Action: "Microsoft.Compute/virtualMachineScaleSets/read", Purpose: "scale sets that own VMs"},
	{Action: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read", Purpose: "VMs of uniform scale sets (AKS node pools)"},
	{Action: "Microsoft.Compute/virtualMachines/instanceView/read", Purpose: "power state of a VM before it is deallocated"},
	{Action: "Microsoft.Compute/virtualMachines/read", Purpose: "list GPU VMs with their size, priority, tags and power state (Resource Graph and the ARM fallback)"},
	{Action: "Microsoft.Insights/metrics/read", Purpose: "GPU custom metrics and Percentage CPU (metrics:getBatch); Azure ML GPU, request and node metrics"},
	{Action: ActionAMLComputesRead, Purpose: "Azure ML compute instances and compute clusters with their size, state and scale settings (providers.azure.managed_ai)"},
	{Action: ActionAMLDeploymentsRead, Purpose: "Azure ML managed online deployments with their instance type and count (providers.azure.managed_ai)"},
	{Action: ActionAMLEndpointsRead, Purpose: "Azure ML online endpoints, to list their deployments (providers.azure.managed_ai)"},
	{Action: ActionAMLWorkspacesRead, Purpose: "Azure ML workspaces of the subscription (providers.azure.managed_ai)"},
	{Action: "Microsoft.Resources/subscriptions/read", Purpose: "list and check the subscriptions to scan"},
}

// RoleIdleStop is what idle-stop adds: deallocating VMs (never power-off,
// which keeps billing). docs/iam/azure-idle-stop.json grants RoleAnalyze
// and these.
var RoleIdleStop = []providers.Permission{
	{Action: "Microsoft.Compute/virtualMachines/deallocate/action", Purpose: "deallocate idle VMs tagged AutoShutdown=true, which ends compute billing; never those tagged auto-shutdown-exempt=true, never scale-set members"},
	{Action: ActionAMLComputeStop, Purpose: "stop idle Azure ML compute instances (never clusters or online deployments)"},
}

// RoleCommitments are the reads of the commitments already held
// (reservations and savings plans). They belong to the tenant's billing,
// not to a subscription, so no subscription role can grant them: the
// built-in Reservations Reader (at /providers/Microsoft.Capacity) and
// Savings plan Reader (at /providers/Microsoft.BillingBenefits) roles do.
var RoleCommitments = []providers.Permission{
	{Action: "Microsoft.Capacity/reservationOrders/reservations/read", Purpose: "the VM reservations held, with their scope (built-in Reservations Reader, which also grants Microsoft.Capacity/reservationOrders/read, assigned at /providers/Microsoft.Capacity)"},
	{Action: "Microsoft.BillingBenefits/savingsPlanOrders/savingsPlans/read", Purpose: "the savings plans held and their hourly commitments (built-in Savings plan Reader, which also grants Microsoft.BillingBenefits/savingsPlanOrders/read, assigned at /providers/Microsoft.BillingBenefits)"},
}

// Policy is the adapter's least-privilege custom role.
func Policy() *providers.Policy {
	return &providers.Policy{
		Kind:     "Azure custom role",
		Analyze:  RoleAnalyze,
		IdleStop: RoleIdleStop,
		Extra: append([]providers.Permission{
			{Action: "Reader + Monitoring Reader (built-in roles)", Purpose: "a wider alternative to the custom role for analyze"},
		}, RoleCommitments...),
		Document: func(idleStop bool) ([]byte, error) {
			if idleStop {
				return roleDocs.ReadFile("iam/idle-stop.json")
			}
			return roleDocs.ReadFile("iam/analyze.json")
		},
		Notes: `The same documents are in docs/iam/ (azure-analyze.json, azure-idle-stop.json).
Replace SUBSCRIPTION_ID in AssignableScopes, then create and assign the role:
  $ gpufinops iam-policy azure > gpufinops-analyze.json
  $ az role definition create --role-definition @gpufinops-analyze.json
  $ az role assignment create --role "gpufinops analyze" --assignee PRINCIPAL --scope /subscriptions/SUBSCRIPTION_ID
The reservations and savings plans already bought are the tenant's, not a
subscription's: two built-in roles read them (without them the scan warns):
  $ az role assignment create --role "Reservations Reader" --assignee PRINCIPAL --scope /providers/Microsoft.Capacity
  $ az role assignment create --role "Savings plan Reader" --assignee PRINCIPAL --scope /providers/Microsoft.BillingBenefits`,
	}
}

var gpuSeries = regexp.MustCompile(`(?i)^Standard_N[CDGV]\d`)

// Accelerated reports whether a VM size has GPUs by its name: a size of the
// size table, or of the NC, ND, NG or NV series.
func Accelerated(size string) bool {
	if _, ok := LookupSize(size); ok {
		return true
	}
	return gpuSeries.MatchString(size)
}
