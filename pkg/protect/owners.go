package protect

import "github.com/gpufinops/gpufinops/pkg/fleet"

// Controller is one owner signal: a tag (exact, prefix or with a value),
// or a resource id, that says a controller owns the machine.
type Controller = fleet.OwnerRule

// Owner kinds beyond the clouds' own (fleet.OwnerKind).
const (
	OwnerSlurm       fleet.OwnerKind = "slurm"
	OwnerPBS         fleet.OwnerKind = "pbs"
	OwnerRay         fleet.OwnerKind = "ray-cluster"
	OwnerDesktopPool fleet.OwnerKind = "desktop-pool"
	OwnerCycleCloud  fleet.OwnerKind = "cyclecloud"
	OwnerAzureBatch  fleet.OwnerKind = "azure-batch"
	OwnerGCPBatch    fleet.OwnerKind = "gcp-batch"
)

// DefaultControllers are the owner signals, per cloud, read besides the
// owner tags each cloud's adapter registers (fleet.AllOwnerRules): the same
// autoscaler written differently per cloud, batch services, HPC schedulers
// and virtual-desktop pools. Keys compare normalised (fleet.NormTagKey);
// Prefix rules match every key starting so.
var DefaultControllers = []Controller{
	// AWS
	{Provider: fleet.AWS, Key: "aws:autoscaling:groupName", Kind: fleet.OwnerAutoScalingGroup},
	{Provider: fleet.AWS, Key: "eks:nodegroup-name", Kind: fleet.OwnerEKSNodeGroup},
	{Provider: fleet.AWS, Key: "eks:cluster-name", Kind: fleet.OwnerEKSNodeGroup},
	{Provider: fleet.AWS, Key: "k8s.io/cluster-autoscaler/", Prefix: true, Kind: fleet.OwnerClusterAutoscaler},
	{Provider: fleet.AWS, Key: "karpenter.sh/", Prefix: true, Kind: fleet.OwnerKarpenter},
	{Provider: fleet.AWS, Key: "karpenter.k8s.aws/", Prefix: true, Kind: fleet.OwnerKarpenter},
	{Provider: fleet.AWS, Key: "kubernetes.io/cluster/", Prefix: true, NameFromKey: true, Kind: fleet.OwnerKubernetes},
	{Provider: fleet.AWS, Key: "parallelcluster:", Prefix: true, Kind: fleet.OwnerParallelCluster},
	{Provider: fleet.AWS, Key: "aws-parallelcluster", Prefix: true, Kind: fleet.OwnerParallelCluster},
	{Provider: fleet.AWS, Key: "aws:batch:", Prefix: true, Kind: fleet.OwnerBatch},
	{Provider: fleet.AWS, Key: "AWSBatchServiceTag", Kind: fleet.OwnerBatch},
	{Provider: fleet.AWS, Key: "aws:ec2spot:fleet-request-id", Kind: fleet.OwnerSpotFleet},
	{Provider: fleet.AWS, Key: "aws:ec2:fleet-id", Kind: fleet.OwnerEC2Fleet},
	{Provider: fleet.AWS, Key: "sagemaker:", Prefix: true, Kind: fleet.OwnerSageMaker},
	{Provider: fleet.AWS, Key: "aws:sagemaker:", Prefix: true, Kind: fleet.OwnerSageMaker},
	// Azure
	{Provider: fleet.Azure, Key: "aks-managed-", Prefix: true, Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "poolName", Kind: fleet.OwnerAKSNodePool, ClusterKeys: []string{"aks-managed-cluster-name", "clusterName"}},
	{Provider: fleet.Azure, Key: "azureml", Prefix: true, Kind: fleet.OwnerAzureML},
	{Provider: fleet.Azure, Key: "BatchAccountName", Kind: OwnerAzureBatch},
	{Provider: fleet.Azure, Key: "BatchPoolName", Kind: OwnerAzureBatch},
	{Provider: fleet.Azure, Key: "batch-pool-", Prefix: true, Kind: OwnerAzureBatch},
	{Provider: fleet.Azure, Key: "cm-resource-parent", ValueContains: "hostpools", Kind: OwnerDesktopPool},
	{Provider: fleet.Azure, Key: "hostpool", Prefix: true, Kind: OwnerDesktopPool},
	{Provider: fleet.Azure, Key: "CycleOwner", Kind: OwnerCycleCloud},
	{Provider: fleet.Azure, Key: "ClusterId", ValueContains: "cyclecloud", Kind: OwnerCycleCloud},
	{Provider: fleet.Azure, IDContains: "/virtualMachineScaleSets/", Kind: fleet.OwnerVMSS},
	// GCP
	{Provider: fleet.GCP, Key: "goog-gke-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "goog-k8s-node-pool-name", Kind: fleet.OwnerGKENodePool, ClusterKeys: []string{"goog-k8s-cluster-name"}},
	{Provider: fleet.GCP, Key: "goog-dataproc-", Prefix: true, Kind: fleet.OwnerDataproc},
	{Provider: fleet.GCP, Key: "goog-managed-by", Kind: fleet.OwnerController},
	{Provider: fleet.GCP, Key: "goog-batch-", Prefix: true, Kind: OwnerGCPBatch},
	{Provider: fleet.GCP, Key: "batch-job-id", Kind: OwnerGCPBatch},
	{Provider: fleet.GCP, Key: "slurm-cluster-name", Kind: OwnerSlurm},
	{Provider: fleet.GCP, Key: "slurm-instance-role", Kind: OwnerSlurm},
	{Provider: fleet.GCP, Key: "goog-vertex-", Prefix: true, Kind: fleet.OwnerVertexAI},
	{Provider: fleet.GCP, IDContains: "/instanceGroupManagers/", Kind: fleet.OwnerMIG},
	// Any cloud: HPC schedulers and Ray's autoscaler.
	{Key: "ray-cluster-name", Kind: OwnerRay},
	{Key: "ray-node-type", Kind: OwnerRay},
	{Key: "ray-user-node-type", Kind: OwnerRay},
	{Key: "slurm", Prefix: true, Kind: OwnerSlurm},
	{Key: "pbs", Prefix: true, Kind: OwnerPBS},
	{Key: "pbspro", Prefix: true, Kind: OwnerPBS},
}

// Owner is the controller that owns a machine: its ManagedBy or the clouds'
// owner tags (fleet.Instance.Owner), else the policy's Controllers; nil
// when nothing owns it.
func Owner(in *fleet.Instance, p Policy) *fleet.ManagedBy {
	if o := in.Owner(); o != nil {
		return o
	}
	if p.Rules.Controllers == nil {
		return defaultDetector(in.ID, in.Tags)
	}
	return fleet.DetectOwnerWith(p.Rules.Controllers, in.ID, in.Tags)
}

// defaultDetector reads DefaultControllers, their keys normalised once.
var defaultDetector = fleet.OwnerDetector(DefaultControllers)
