package fleet

import "math"

// ManagedService names a managed AI service that runs GPU machines for an
// account in the cloud's own tenant, so they never show up as the
// account's virtual machines.
type ManagedService string

// The managed AI services gpufinops reads.
const (
	SageMaker ManagedService = "sagemaker"
	VertexAI  ManagedService = "vertex-ai"
	AzureML   ManagedService = "azure-ml"
)

// ManagedServices lists the valid managed services.
var ManagedServices = []ManagedService{SageMaker, VertexAI, AzureML}

// ManagedKind is what a managed item is, in words common to the three
// services.
type ManagedKind string

// The kinds of managed items.
const (
	// KindEndpoint is one deployment of a real-time endpoint: a SageMaker
	// production variant, a Vertex AI deployed model on dedicated
	// resources, an Azure ML managed online deployment. Its replicas bill
	// while deployed, with or without traffic. Never stopped by the tool.
	KindEndpoint ManagedKind = "endpoint"
	// KindNotebook is a notebook machine the user starts and stops: a
	// SageMaker notebook instance, a Vertex AI Workbench instance, an Azure
	// ML compute instance. idle-stop may stop it through the service.
	KindNotebook ManagedKind = "notebook"
	// KindStudioApp is a SageMaker Studio app (JupyterLab, Code Editor,
	// kernel gateway) on its own instance.
	KindStudioApp ManagedKind = "studio-app"
	// KindTrainingJob is a running training job: SageMaker training, Vertex
	// AI custom job.
	KindTrainingJob ManagedKind = "training-job"
	// KindProcessingJob is a running SageMaker processing job.
	KindProcessingJob ManagedKind = "processing-job"
	// KindComputeCluster is a cluster that scales nodes for jobs: an Azure
	// ML compute cluster (AmlCompute).
	KindComputeCluster ManagedKind = "compute-cluster"
)

// ManagedKinds lists the valid managed kinds.
var ManagedKinds = []ManagedKind{KindEndpoint, KindNotebook, KindStudioApp, KindTrainingJob, KindProcessingJob, KindComputeCluster}

// MaxReplicas bounds managed.replicas counts.
const MaxReplicas = 10000

// Managed says an item of the fleet is a machine (or a set of identical
// replicas) a managed AI service runs and bills: what service and kind, the
// workspace and endpoint it belongs to, how many replicas bill and how the
// service may scale them. An instance with it keeps the usual fields:
// InstanceType is the type as the service names it (ml.g5.xlarge,
// a2-highgpu-1g, Standard_NC24ads_A100_v4), GPU is per replica, Usage and
// Utilization are per replica, and State is running while any replica bills.
type Managed struct {
	// Service is the managed service that runs the item.
	Service ManagedService `json:"service" jsonschema_description:"The managed AI service that runs the item: sagemaker, vertex-ai or azure-ml."`
	// Kind is what the item is.
	Kind ManagedKind `json:"kind" jsonschema_description:"What the item is: endpoint (one deployment of a real-time endpoint), notebook (SageMaker notebook instance, Vertex AI Workbench instance, Azure ML compute instance), studio-app, training-job, processing-job or compute-cluster."`
	// Workspace is the service's container of the item: the SageMaker
	// Studio domain, the Azure ML workspace, the Vertex AI location.
	Workspace string `json:"workspace,omitempty" jsonschema_description:"The service's container of the item: the SageMaker Studio domain, the Azure ML workspace, the Vertex AI location."`
	// Endpoint is the endpoint a deployment serves (KindEndpoint).
	Endpoint string `json:"endpoint,omitempty" jsonschema_description:"The endpoint a deployment serves (kind endpoint)."`
	// Deployment is the deployment within the endpoint: a SageMaker
	// production variant, a Vertex AI deployed model ID, an Azure ML
	// deployment name.
	Deployment string `json:"deployment,omitempty" jsonschema_description:"The deployment within the endpoint: SageMaker production variant, Vertex AI deployed model ID, Azure ML deployment."`
	// Replicas are the machines that bill now and the bounds the service
	// scales them within; nil means one machine (a notebook, a Studio app).
	Replicas *Replicas `json:"replicas,omitempty" jsonschema_description:"The replicas (instances, nodes) that bill now and the bounds the service scales them within; absent means one machine."`
	// Serverless is true for a deployment billed per request (SageMaker
	// serverless inference): no machine bills while it is idle.
	Serverless bool `json:"serverless,omitempty" jsonschema_description:"Billed per request (SageMaker serverless inference): no machine bills while idle."`
	// Async is true for an asynchronous endpoint (SageMaker async
	// inference), which can scale to zero instances.
	Async bool `json:"async,omitempty" jsonschema_description:"An asynchronous endpoint (SageMaker async inference), which can scale to zero instances."`
	// InferenceComponents is how many models share the deployment's
	// machines (SageMaker inference components, Vertex AI models on one
	// deployment resource pool).
	InferenceComponents int `json:"inferenceComponents,omitempty" jsonschema:"minimum=0" jsonschema_description:"How many models share the deployment's machines (SageMaker inference components, models on one Vertex AI deployment resource pool)."`
	// ScaleToZero is true when the service can scale this item to zero
	// replicas and back without deleting it.
	ScaleToZero bool `json:"scaleToZero,omitempty" jsonschema_description:"The service can scale this item to zero replicas and back without deleting it."`
	// IdleShutdownMinutes is the service's own idle shutdown setting: the
	// minutes of inactivity after which it stops the machine (or scales a
	// cluster's idle nodes down); 0 means off, nil unknown.
	IdleShutdownMinutes *float64 `json:"idleShutdownMinutes,omitempty" jsonschema:"minimum=0" jsonschema_description:"The service's own idle shutdown: minutes of inactivity after which it stops the machine or scales idle nodes down; 0 means off, absent unknown."`
	// Requests is how many requests (invocations, predictions) the item
	// served over the utilization window; nil when unknown.
	Requests *float64 `json:"requests,omitempty" jsonschema:"minimum=0" jsonschema_description:"Requests (invocations, predictions) served over the utilization window; absent when unknown (never taken as zero)."`
	// Jobs is how many jobs or runs a compute cluster ran over the window;
	// nil when unknown.
	Jobs *float64 `json:"jobs,omitempty" jsonschema:"minimum=0" jsonschema_description:"Jobs or runs a compute cluster ran over the window; absent when unknown (never taken as zero)."`
	// PriceType is the name the price lists give this item when it is not
	// InstanceType (a service pricing a machine type under its own SKUs,
	// e.g. vertex-ai/a2-highgpu-1g); empty means InstanceType.
	PriceType string `json:"priceType,omitempty" jsonschema_description:"The name the price lists give the item when not its instanceType (a service pricing machines under its own SKUs, e.g. vertex-ai/a2-highgpu-1g)."`
}

// Replicas are a managed item's billed machines and scaling bounds.
type Replicas struct {
	// Current is how many replicas (instances, nodes) bill now.
	Current int `json:"current" jsonschema:"minimum=0" jsonschema_description:"Replicas (instances, nodes) billing now."`
	// Min and Max bound the service's scaling; nil when it does not scale.
	Min *int `json:"min,omitempty" jsonschema:"minimum=0" jsonschema_description:"Fewest replicas the service scales to; absent when it does not scale."`
	Max *int `json:"max,omitempty" jsonschema:"minimum=0" jsonschema_description:"Most replicas the service scales to; absent when it does not scale."`
}

// IsManaged reports whether the instance is an item of a managed AI service.
func (in *Instance) IsManaged() bool { return in.Managed != nil }

// ReplicaCount is how many machines of the instance's type bill: the
// managed item's current replicas where it has replicas, else 1.
func (in *Instance) ReplicaCount() float64 {
	if in.Managed == nil {
		return 1
	}
	return float64(in.Managed.CurrentReplicas())
}

// PriceKey is the instance type the price lists use for the instance.
func (in *Instance) PriceKey() string {
	if in.Managed != nil && in.Managed.PriceType != "" {
		return in.Managed.PriceType
	}
	return in.InstanceType
}

func (c *checker) managed(m *Managed) {
	if m.Service == "" {
		c.failf("service", "missing; want one of %s", list(ManagedServices))
	} else {
		oneOf(c, "service", m.Service, ManagedServices)
	}
	if m.Kind == "" {
		c.failf("kind", "missing; want one of %s", list(ManagedKinds))
	} else {
		oneOf(c, "kind", m.Kind, ManagedKinds)
	}
	if r := m.Replicas; r != nil {
		c.count("replicas.current", r.Current)
		if r.Min != nil {
			c.count("replicas.min", *r.Min)
		}
		if r.Max != nil {
			c.count("replicas.max", *r.Max)
		}
		if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
			c.failf("replicas.min", "%d is above replicas.max %d", *r.Min, *r.Max)
		}
	}
	if m.InferenceComponents < 0 || m.InferenceComponents > MaxReplicas {
		c.failf("inferenceComponents", "%d is not a count from 0 to %d", m.InferenceComponents, MaxReplicas)
	}
	if m.IdleShutdownMinutes != nil {
		c.bounded("idleShutdownMinutes", *m.IdleShutdownMinutes, 1e6, "minutes")
	}
	if m.Requests != nil {
		c.bounded("requests", *m.Requests, 1e15, "requests")
	}
	if m.Jobs != nil {
		c.bounded("jobs", *m.Jobs, 1e9, "jobs")
	}
}

func (c *checker) count(p string, v int) {
	if v < 0 || v > MaxReplicas {
		c.failf(p, "%d is not a count from 0 to %d", v, MaxReplicas)
	}
}

// bounded fails a value that is not a finite number from 0 to limit.
func (c *checker) bounded(p string, v, limit float64, unit string) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > limit {
		c.failf(p, "%s is not a number of %s from 0 to %s", num(v), unit, num(limit))
	}
}

// ManagedAction is a change the report advises on a managed item; the
// cloud's adapter spells it as the exact command to run.
type ManagedAction string

// The changes advised on managed items.
const (
	// ActionDeleteEndpoint deletes the deployment (undeploys the model);
	// the endpoint is gone until it is deployed again.
	ActionDeleteEndpoint ManagedAction = "delete-endpoint"
	// ActionScaleToZero lets the service scale the item to zero replicas
	// while it has no traffic (min replicas 0).
	ActionScaleToZero ManagedAction = "scale-to-zero"
	// ActionSetReplicas sets the deployment's replica count (and its
	// autoscaling minimum) to ManagedChange.Replicas.
	ActionSetReplicas ManagedAction = "set-replicas"
	// ActionSetMinReplicas sets a compute cluster's minimum nodes to
	// ManagedChange.Replicas.
	ActionSetMinReplicas ManagedAction = "set-min-replicas"
	// ActionChangeInstanceType redeploys on ManagedChange.InstanceType.
	ActionChangeInstanceType ManagedAction = "change-instance-type"
	// ActionStopNotebook stops a notebook machine.
	ActionStopNotebook ManagedAction = "stop-notebook"
	// ActionIdleShutdown turns on the service's own idle shutdown after
	// ManagedChange.IdleShutdownMinutes.
	ActionIdleShutdown ManagedAction = "enable-idle-shutdown"
	// ActionManagedSpot runs the next jobs on the service's spot capacity
	// (SageMaker managed spot training, Vertex AI SPOT scheduling, Azure ML
	// low-priority nodes).
	ActionManagedSpot ManagedAction = "use-managed-spot"
)

// ManagedChange is one advised change to a managed item.
type ManagedChange struct {
	Action ManagedAction
	// Replicas is the count for ActionSetReplicas and ActionSetMinReplicas.
	Replicas int
	// InstanceType is the target of ActionChangeInstanceType.
	InstanceType string
	// IdleShutdownMinutes is the setting for ActionIdleShutdown.
	IdleShutdownMinutes float64
}

// CurrentReplicas is how many replicas bill now: Replicas.Current, or 1
// when the item gives no replicas.
func (m *Managed) CurrentReplicas() int {
	if m.Replicas == nil {
		return 1
	}
	return m.Replicas.Current
}

// MinReplicas is the fewest replicas the service scales to; nil when it
// does not scale.
func (m *Managed) MinReplicas() *int {
	if m.Replicas == nil {
		return nil
	}
	return m.Replicas.Min
}

// MaxReplicas is the most replicas the service scales to; nil when it does
// not scale.
func (m *Managed) MaxReplicas() *int {
	if m.Replicas == nil {
		return nil
	}
	return m.Replicas.Max
}
