package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/invopop/jsonschema"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// fleetID is the fleet schema's $id: where the committed file is published.
const fleetID = BaseID + "fleet.schema.json"

// fleetSchemaObject reflects the fleet types and annotates the result.
func fleetSchemaObject() (*jsonschema.Schema, error) {
	r := &jsonschema.Reflector{ExpandedStruct: true, Mapper: fleetMapType}
	s := r.Reflect(&fleet.Fleet{})
	s.ID = fleetID
	s.Title = "gpufinops fleet"
	if err := annotate(s); err != nil {
		return nil, err
	}
	return s, nil
}

// fleetSchema is the fleet file's schema, the description of each property
// written below rather than taken from doc comments.
func fleetSchema(string) ([]byte, error) {
	s, err := fleetSchemaObject()
	if err != nil {
		return nil, err
	}
	return encode(s)
}

// fleetMapType gives the schema of fleet types whose JSON form is not their Go shape.
func fleetMapType(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[decimal.Decimal]():
		return &jsonschema.Schema{Type: "number", Minimum: "0"}
	case reflect.TypeFor[fleet.PerGPU]():
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
			percent(),
			{Type: "array", Items: percent(), MinItems: ptr[uint64](1)},
		}}
	}
	return nil
}

func percent() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Minimum: "0", Maximum: "100"}
}

func ptr[T any](v T) *T { return &v }

// A note annotates one property, or the definition itself when prop is "".
type note struct {
	def, prop, desc string
	edit            func(*jsonschema.Schema)
}

func enum[T ~string](values ...T) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		for _, v := range values {
			s.Enum = append(s.Enum, string(v))
		}
	}
}

func between(lo, hi float64) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		s.Minimum = json.Number(strconv.FormatFloat(lo, 'f', -1, 64))
		if hi >= 0 {
			s.Maximum = json.Number(strconv.FormatFloat(hi, 'f', -1, 64))
		}
	}
}

var nonNegative = between(0, -1)

func pct(s *jsonschema.Schema) { between(0, 100)(s) }

func withDefault(v string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) { s.Default = v }
}

const clock = `^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`

var notes = []note{
	{"", "", "A snapshot of GPU instances across clouds, as read by `gpufinops analyze --fleet` and written by `gpufinops inventory -o json|yaml`. See docs/fleet-format.md.", nil},
	{"", "apiVersion", "Version of the file format.", func(s *jsonschema.Schema) { s.Const = fleet.APIVersion }},
	{"", "kind", "Kind of document.", func(s *jsonschema.Schema) { s.Const = fleet.Kind }},
	{"", "metadata", "Where and when the snapshot was taken.", nil},
	{"", "instances", "The GPU instances; ids are unique.", nil},

	{"Metadata", "", "Where and when the snapshot was taken.", nil},
	{"Metadata", "name", "Name of the snapshot.", nil},
	{"Metadata", "description", "Free text.", nil},
	{"Metadata", "generatedAt", "When the snapshot was taken (RFC 3339).", nil},
	{"Metadata", "source", "What produced the snapshot, e.g. a provider or \"demo\".", nil},
	{"Metadata", "warnings", "The parts of the scan that failed; a report of the snapshot repeats them and exits 3.", nil},

	{"ScanWarning", "", "One part of a scan that failed: a scope not listed, or a metrics source not read.", nil},
	{"ScanWarning", "code", "scope-failed (the scope's instances are missing), metrics-failed (they are kept with utilization unknown) or commitments-failed (a commitment API could not be read: the commitments it lists are missing).", func(s *jsonschema.Schema) { s.Pattern = "^[a-z][a-z0-9-]*$" }},
	{"ScanWarning", "provider", "Cloud of the scope.", enum(fleet.Providers...)},
	{"ScanWarning", "account", "Account, subscription or project of the scope.", nil},
	{"ScanWarning", "region", "Region of the scope.", nil},
	{"ScanWarning", "source", "Metrics source that failed: cloudwatch, prometheus, nvidia-smi.", nil},
	{"ScanWarning", "reason", "The error, on one line.", func(s *jsonschema.Schema) { s.MinLength = ptr[uint64](1) }},
	{"ScanWarning", "instances", "Ids of the instances left with utilization unknown.", nil},

	{"Instance", "", "One GPU virtual machine.", func(s *jsonschema.Schema) {
		s.Required = []string{"id", "provider", "region", "instanceType"}
	}},
	{"Instance", "id", "The cloud's identifier of the instance; unique in the file.", func(s *jsonschema.Schema) { s.MinLength = ptr[uint64](1) }},
	{"Instance", "name", "Display name.", nil},
	{"Instance", "provider", "The cloud.", enum(fleet.Providers...)},
	{"Instance", "account", "AWS account id, Azure subscription id or GCP project id.", nil},
	{"Instance", "region", "The cloud's region name, e.g. us-east-1, eastus, us-central1.", func(s *jsonschema.Schema) { s.MinLength = ptr[uint64](1) }},
	{"Instance", "zone", "Availability zone.", nil},
	{"Instance", "instanceType", "The cloud's instance type (AWS), VM size (Azure) or machine type (GCP).", func(s *jsonschema.Schema) { s.MinLength = ptr[uint64](1) }},
	{"Instance", "gpu", "The instance's accelerators; fields left out are filled from the catalog by instance type.", nil},
	{"Instance", "vcpus", "Host vCPUs; filled from the catalog when left out.", nonNegative},
	{"Instance", "memoryGiB", "Host memory in GiB; filled from the catalog when left out.", nonNegative},
	{"Instance", "lifecycle", "How the instance is bought. Default on-demand.", func(s *jsonschema.Schema) {
		enum(fleet.Lifecycles...)(s)
		withDefault(string(fleet.OnDemand))(s)
	}},
	{"Instance", "state", "Whether the instance runs (and is billed for compute). Default running.", func(s *jsonschema.Schema) {
		enum(fleet.States...)(s)
		withDefault(string(fleet.Running))(s)
	}},
	{"Instance", "spotInterruption", "Only with lifecycle spot: what the cloud does to the instance when it reclaims it. deallocate (an Azure Spot VM with eviction policy Deallocate) or stop (a GCP Spot VM with instanceTerminationAction STOP) keep its disks, so it is stopped like on-demand; delete, terminate (an AWS one-time spot instance) or left out keep it from being stopped.", enum(fleet.SpotInterruptions...)},
	{"Instance", "resourcePolicies", "Other policies attached to the instance that place nothing (a GCP instance or snapshot schedule), as projects/… paths: shared by many instances, they make no multi-host group.", nil},
	{"Instance", "placementGroups", "The cloud's placement constructs the instance was launched into: an AWS placement group ID (its name when no ID is given), an Azure proximity placement group ID, the GCP placement and workload policies attached to it (every attached policy when their kinds could not be read). Instances of one account and region sharing one are hosts of one multi-host group: an idle host whose peers work is not stopped.", nil},
	{"Instance", "launchTime", "When the instance was started (RFC 3339).", nil},
	{"Instance", "usage", "How many hours a month the instance runs; left out, a running instance runs all 730.", nil},
	{"Instance", "tags", "The instance's tags or labels, key to value.", nil},
	{"Instance", "utilization", "What the GPUs and host did over a window: statistics or samples.", nil},
	{"Instance", "workload", "What runs on the instance.", nil},
	{"Instance", "hourlyPrice", "USD per instance-hour, overriding the catalog price (a negotiated or billed rate).", nil},
	{"Instance", "commitment", "Only with lifecycle committed: the reservation or savings plan covering the instance and what it pays.", nil},

	{"Instance", "managed", "Set on an item a managed AI service (SageMaker, Vertex AI, Azure ML) runs and bills, rather than a virtual machine of the account's own; see docs/managed-ai.md.", nil},
	{"Managed", "", "What a managed AI service runs for the account: the service and kind, where it belongs, the replicas that bill and how the service may scale them. instanceType is the type as the service names it; gpu, usage and utilization are per replica.", nil},
	{"Managed", "service", "The managed AI service that runs the item.", enum(fleet.ManagedServices...)},
	{"Managed", "kind", "What the item is: endpoint (one deployment of a real-time endpoint: SageMaker production variant, Vertex AI deployed model, Azure ML online deployment; never stopped by the tool), notebook (SageMaker notebook instance, Vertex AI Workbench instance, Azure ML compute instance; idle-stop may stop it), studio-app, training-job, processing-job or compute-cluster (Azure ML AmlCompute).", enum(fleet.ManagedKinds...)},
	{"Managed", "workspace", "The service's container of the item: the SageMaker Studio domain, the Azure ML workspace, the Vertex AI location.", nil},
	{"Managed", "endpoint", "The endpoint a deployment serves (kind endpoint).", nil},
	{"Managed", "deployment", "The deployment within the endpoint: SageMaker production variant, Vertex AI deployed model ID, Azure ML deployment.", nil},
	{"Managed", "replicas", "The replicas (instances, nodes) that bill now and the bounds the service scales them within; the item's cost is its price times its current replicas. Absent means one machine (a notebook, a Studio app).", nil},
	{"Managed", "serverless", "Billed per request (SageMaker serverless inference): no machine bills while idle.", nil},
	{"Managed", "async", "An asynchronous endpoint (SageMaker async inference), which can scale to zero instances.", nil},
	{"Managed", "inferenceComponents", "How many models share the deployment's machines (SageMaker inference components, models on one Vertex AI deployment resource pool).", nonNegative},
	{"Managed", "scaleToZero", "The service can scale this item to zero replicas and back without deleting it.", nil},
	{"Managed", "idleShutdownMinutes", "The service's own idle shutdown: minutes of inactivity after which it stops the machine or scales idle nodes down; 0 means off, absent unknown.", nonNegative},
	{"Managed", "requests", "Requests (invocations, predictions) served over the utilization window; absent when unknown, which is never taken as zero.", nonNegative},
	{"Managed", "jobs", "Jobs or runs a compute cluster ran over the window; absent when unknown, which is never taken as zero.", nonNegative},
	{"Managed", "priceType", "The name the price lists give the item when not its instanceType: Vertex AI prices machines under its own SKUs as vertex-ai/<prediction|training>/<machineType>[+<n>x<ACCELERATOR>].", nil},
	{"Replicas", "", "A managed item's billed machines and scaling bounds.", nil},
	{"Replicas", "current", "Replicas (instances, nodes) billing now; 0 bills nothing.", nonNegative},
	{"Replicas", "min", "Fewest replicas the service scales to; absent when it does not scale.", nonNegative},
	{"Replicas", "max", "Most replicas the service scales to; absent when it does not scale.", nonNegative},
	{"Commitment", "", "A reservation or savings plan that covers a committed instance.", nil},
	{"Commitment", "kind", "What was bought: compute-savings-plan, ec2-instance-savings-plan, standard-reserved-instance, convertible-reserved-instance, reservation (Azure) or resource-cud (GCP).", nil},
	{"Commitment", "term", "The term.", enum(fleet.CommitmentTerms...)},
	{"Commitment", "payment", "The payment option, e.g. no-upfront, partial-upfront, all-upfront.", nil},
	{"Commitment", "hourlyRate", "Effective USD per instance-hour it pays, upfront amortised; left out when unknown (the instance is then flagged rate unknown).", nonNegative},
	{"Commitment", "id", "The id of the fleet-level commitment (commitments[].id) that covers the instance, when known.", nil},

	{"", "commitments", "Commitments the accounts have already bought (reservations, savings plans, CUDs, capacity reservations); paid every hour of their term. See docs/commitments.md.", nil},
	{"Held", "", "A commitment already bought: paid every hour of its term whether or not anything runs on it.", nil},
	{"Held", "id", "The cloud's identifier: reserved instance id, savings plan ARN, reservation id or commitment self-link.", nil},
	{"Held", "provider", "The cloud that sold it.", enum(fleet.Providers...)},
	{"Held", "account", "The account, subscription, project or billing account that owns it.", nil},
	{"Held", "kind", "What was bought; each cloud has its own kinds (docs/commitments.md).", nil},
	{"Held", "scope", "Where it applies.", nil},
	{"Held", "term", "The term; left out for capacity reservations and blocks.", enum(fleet.CommitmentTerms...)},
	{"Held", "payment", "The payment option, e.g. no-upfront, partial-upfront, all-upfront.", nil},
	{"Held", "start", "Start of the term (RFC 3339).", nil},
	{"Held", "end", "End of the term (RFC 3339); after start.", nil},
	{"Held", "instanceType", "The instance type a reserved instance, reservation, capacity reservation or block is for.", nil},
	{"Held", "instanceFamily", "The instance family an EC2 Instance Savings Plan is for, or the machine series (g2, a2, a3-mega) whose vCPUs and memory a GCP resource-based CUD covers (its commitment type); without it a CUD's vCPUs and memory are taken to fit any series.", nil},
	{"Held", "count", "How many instances of instanceType are reserved.", nonNegative},
	{"Held", "sizeFlexible", "The reservation applies across the sizes of its family: AWS regional Linux RIs by normalization factor; Azure reservations with instance size flexibility On by the ratios of the size's flexibility group (Microsoft's ratio table when analyze.isf_ratios gives it, else derived from the vCPUs of GPU sizes of one series).", nil},
	{"Held", "resources", "What a GCP resource-based CUD commits to in its region.", nil},
	{"Held", "hourlyCommitment", "USD per hour a savings plan or spend-based CUD commits to spend.", nonNegative},
	{"Held", "hourlyRate", "Effective USD per unit-hour it pays, upfront amortised.", nonNegative},
	{"Held", "source", "Where it was read: fleet, or the API such as ec2:DescribeReservedInstances.", nil},

	{"HeldScope", "", "Where a commitment applies.", nil},
	{"HeldScope", "level", "The scope level.", enum(fleet.HeldScopeLevels...)},
	{"HeldScope", "region", "The region it applies in.", nil},
	{"HeldScope", "zone", "The zone, for zonal reservations.", nil},
	{"HeldScope", "accounts", "The accounts, subscriptions, resource groups or projects a scoped commitment is limited to.", nil},

	{"HeldResource", "", "One resource a GCP resource-based CUD commits to.", nil},
	{"HeldResource", "type", "The resource; memory and local-ssd in GiB.", enum(fleet.HeldResourceTypes...)},
	{"HeldResource", "gpuModel", "The GPU model a gpu commitment is for, e.g. L4.", nil},
	{"HeldResource", "amount", "How much of the resource is committed.", nonNegative},

	{"GPU", "", "The instance's accelerators.", nil},
	{"GPU", "model", "GPU model as the catalog names it, e.g. A10G, A100, A100-80GB, H100, L4, T4.", nil},
	{"GPU", "count", "Number of GPUs; fractional for a partition of one GPU.", nonNegative},
	{"GPU", "memoryGiB", "Memory per GPU (per partition) in GiB.", nonNegative},

	{"Usage", "", "Running hours. Give at most one of the fields.", func(s *jsonschema.Schema) { s.MaxProperties = ptr[uint64](1) }},
	{"Usage", "hoursPerMonth", "Billed hours a month.", between(0, fleet.MaxHoursPerMonth)},
	{"Usage", "hoursPerWeek", "Hours a week; a month is hours per week × 730 / 168.", between(0, fleet.HoursPerWeek)},
	{"Usage", "schedule", "A weekly on/off schedule.", nil},

	{"Schedule", "", "A weekly on/off schedule; overlapping windows count once.", nil},
	{"Schedule", "timezone", "IANA time zone of the windows, e.g. Europe/Berlin. Default UTC.", nil},
	{"Schedule", "windows", "The times the instance is on.", func(s *jsonschema.Schema) { s.MinItems = ptr[uint64](1) }},

	{"Window", "", "A daily time range on some weekdays.", nil},
	{"Window", "days", "Weekdays the window applies to.", func(s *jsonschema.Schema) {
		s.MinItems = ptr[uint64](1)
		enum("mon", "tue", "wed", "thu", "fri", "sat", "sun")(s.Items)
	}},
	{"Window", "start", "Start time, HH:MM.", func(s *jsonschema.Schema) { s.Pattern = clock }},
	{"Window", "end", "End time, HH:MM, after start; 24:00 is the end of the day.", func(s *jsonschema.Schema) { s.Pattern = clock }},

	{"Utilization", "", "Utilization over a window, as statistics (gpu, gpuMemory, cpu, memory) or as samples, not both. GPU values are of the busiest GPU at each instant.", func(s *jsonschema.Schema) {
		s.Not = &jsonschema.Schema{
			Required: []string{"samples"},
			AnyOf: []*jsonschema.Schema{
				{Required: []string{"gpu"}}, {Required: []string{"gpuMemory"}},
				{Required: []string{"cpu"}}, {Required: []string{"memory"}},
			},
		}
	}},
	{"Utilization", "window", "The period observed; samples must lie in it.", nil},
	{"Utilization", "gpu", "GPU compute utilization, percent.", nil},
	{"Utilization", "gpuMemory", "GPU memory used, percent of GPU memory.", nil},
	{"Utilization", "cpu", "Host CPU utilization, percent.", nil},
	{"Utilization", "memory", "Host memory used, percent.", nil},
	{"Utilization", "samples", "Timestamped readings; the statistics are computed from them.", nil},
	{"Utilization", "source", "Where the figures came from when a metrics source filled them, e.g. prometheus or nvidia-smi:gpu-1.csv.", func(s *jsonschema.Schema) { s.Pattern = `\S` }},
	{"Utilization", "coverage", "Share (0–1) of the window with data; below 0.8 lowers confidence and rules out idle.", between(0, 1)},

	{"TimeRange", "", "A half-open interval [start, end).", nil},
	{"TimeRange", "start", "Start (RFC 3339).", nil},
	{"TimeRange", "end", "End (RFC 3339), after start.", nil},

	{"Stats", "", "Statistics of a percentage over the window; avg ≤ p95 ≤ max.", nil},
	{"Stats", "avg", "Mean, percent.", pct},
	{"Stats", "p95", "95th percentile, percent.", pct},
	{"Stats", "max", "Maximum, percent.", pct},

	{"Sample", "", "One reading.", nil},
	{"Sample", "time", "When the reading was taken (RFC 3339).", nil},
	{"Sample", "gpu", "GPU utilization in percent: one number, or a list with one per GPU.", nil},
	{"Sample", "gpuMemory", "GPU memory used in percent: one number, or a list with one per GPU.", nil},
	{"Sample", "cpu", "Host CPU utilization, percent.", pct},
	{"Sample", "memory", "Host memory used, percent.", pct},

	{"ManagedBy", "", "The controller that owns the instance; idle-stop never stops it directly and analyze advises scaling the owner down.", nil},
	{"ManagedBy", "kind", "Kind of owner: auto-scaling-group, eks-node-group, karpenter, cluster-autoscaler, kubernetes-cluster, sagemaker, batch, emr, parallelcluster, spot-fleet, ec2-fleet, ecs, elastic-beanstalk, aks-node-pool, vmss, azure-ml, gke-node-pool, managed-instance-group, dataproc, vertex-ai, databricks or controller.", func(s *jsonschema.Schema) { s.Pattern = `\S` }},
	{"ManagedBy", "name", "The owner's name (group, cluster or pool), or the tag that names it.", nil},

	{"Workload", "", "What runs on the instance.", nil},
	{"Workload", "type", "Kind of work; drives spot and sharing advice.", enum(fleet.WorkloadTypes...)},
	{"Workload", "model", "The model's name, e.g. llama-3.1-8b.", nil},
	{"Workload", "paramsBillions", "Parameter count in billions.", nonNegative},
	{"Workload", "precision", "Precision of the weights.", enum(fleet.Precisions...)},
	{"Workload", "checkpoints", "Whether the job saves checkpoints and resumes from them.", nil},
}

// annotate applies the notes; a note for a property the types lack is an
// error, so that renaming a field cannot silently drop its documentation.
func annotate(root *jsonschema.Schema) error {
	for _, n := range notes {
		s := root
		if n.def != "" {
			if s = root.Definitions[n.def]; s == nil {
				return fmt.Errorf("no definition %q", n.def)
			}
		}
		if n.prop != "" {
			p, ok := s.Properties.Get(n.prop)
			if !ok {
				return fmt.Errorf("%s has no property %q", n.def, n.prop)
			}
			s = p
		}
		s.Description = n.desc
		if n.edit != nil {
			n.edit(s)
		}
	}
	return nil
}
