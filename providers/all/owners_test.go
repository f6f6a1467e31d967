package all

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/protect"
)

// Nodes tagged as each cloud's node-pool service tags them: the owner is
// the pool (or group), in its cluster, never a marker tag or the value of
// a tag that names something else (the cluster, an operation id, a role).
func TestOwnerIsThePoolNotAMarker(t *testing.T) {
	for _, tc := range []struct {
		name string
		tags map[string]string
		kind fleet.OwnerKind
		want string
	}{
		{"gke", map[string]string{"goog-gke-node": "", "goog-k8s-cluster-name": "ml-prod", "goog-k8s-cluster-location": "us-central1", "goog-k8s-node-pool-name": "l4-pool", "goog-gke-cost-management": ""}, fleet.OwnerGKENodePool, "ml-prod/l4-pool"},
		{"gke without cluster", map[string]string{"goog-gke-node": "", "goog-k8s-node-pool-name": "l4-pool"}, fleet.OwnerGKENodePool, "l4-pool"},
		{"gke marker only", map[string]string{"goog-gke-node": "", "goog-k8s-cluster-name": "ml-prod"}, fleet.OwnerGKENodePool, "ml-prod"},
		{"dataproc", map[string]string{"goog-dataproc-autozone": "enabled", "goog-dataproc-cluster-name": "etl", "goog-dataproc-cluster-uuid": "0b1c", "goog-dataproc-location": "us-east1"}, fleet.OwnerDataproc, "etl"},
		{"aks", map[string]string{"aks-managed-cluster-name": "aks-ml", "aks-managed-createOperationID": "5d1e0c1a", "aks-managed-creationSource": "vmssclient-aks-gpupool-123-vmss", "aks-managed-orchestrator": "Kubernetes:1.29.2", "aks-managed-poolName": "gpupool", "aks-managed-resourceNameSuffix": "123"}, fleet.OwnerAKSNodePool, "aks-ml/gpupool"},
		{"aks labels", map[string]string{"kubernetes.azure.com/agentpool": "a100", "kubernetes.azure.com/cluster": "MC_rg_aks_eastus", "kubernetes.azure.com/role": "agent"}, fleet.OwnerAKSNodePool, "MC_rg_aks_eastus/a100"},
		{"eks managed", map[string]string{"eks:cluster-name": "prod", "eks:nodegroup-name": "gpu-ng", "aws:autoscaling:groupName": "eks-gpu-ng-42", "kubernetes.io/cluster/prod": "owned", "k8s.io/cluster-autoscaler/enabled": "true"}, fleet.OwnerEKSNodeGroup, "prod/gpu-ng"},
		{"eksctl", map[string]string{"alpha.eksctl.io/cluster-name": "prod", "alpha.eksctl.io/eksctl-version": "0.180.0", "alpha.eksctl.io/nodegroup-name": "gpu", "alpha.eksctl.io/nodegroup-type": "unmanaged"}, fleet.OwnerEKSNodeGroup, "prod/gpu"},
		{"karpenter", map[string]string{"karpenter.sh/discovery": "prod", "karpenter.sh/managed-by": "prod", "karpenter.sh/nodeclaim": "gpu-x7k2", "karpenter.sh/nodepool": "gpu", "karpenter.k8s.aws/ec2nodeclass": "default", "eks:eks-cluster-name": "prod"}, fleet.OwnerKarpenter, "prod/gpu"},
		{"emr", map[string]string{"aws:elasticmapreduce:instance-group-role": "CORE", "aws:elasticmapreduce:job-flow-id": "j-2AXXXXXXGAPLF"}, fleet.OwnerEMR, "j-2AXXXXXXGAPLF"},
		{"parallelcluster", map[string]string{"parallelcluster:attributes": "ubuntu2204, slurm", "parallelcluster:cluster-name": "hpc", "parallelcluster:node-type": "Compute", "parallelcluster:queue-name": "gpu"}, fleet.OwnerParallelCluster, "hpc"},
	} {
		got := fleet.DetectOwner("i-1", tc.tags)
		if got == nil || got.Kind != tc.kind || got.Name != tc.want {
			t.Errorf("%s: owner %+v, want %s %q", tc.name, got, tc.kind, tc.want)
		}
	}
}

// Property, for every rule that names a pool (it has ClusterKeys): a node
// with the pool's tag keeps the pool as its owner's name whatever other
// tags of the same kind of owner it carries (markers with no value, ids,
// the cluster's tags), in any order of keys.
func TestPoolRuleWinsOverSameKindTags(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	rules := fleet.AllOwnerRules()
	pools := 0
	for _, pool := range rules {
		if len(pool.ClusterKeys) == 0 {
			continue
		}
		pools++
		var others []fleet.OwnerRule
		for _, o := range rules {
			if o.Kind == pool.Kind && o.IDContains == "" && len(o.ClusterKeys) == 0 {
				others = append(others, o)
			}
		}
		for range 200 {
			tags := map[string]string{pool.Key: "pool-" + strconv.Itoa(r.Intn(9))}
			for _, o := range others {
				if r.Intn(2) == 0 {
					continue
				}
				k := o.Key
				if o.Prefix {
					k += []string{"a", "node", "zzz", "cluster-name"}[r.Intn(4)]
				}
				if _, dup := tags[k]; !dup {
					tags[k] = []string{"", "true", "owned", "x-" + strconv.Itoa(r.Intn(9))}[r.Intn(4)]
				}
			}
			got := fleet.DetectOwner("i-1", tags)
			if got == nil || got.Kind != pool.Kind || !strings.HasSuffix(got.Name, tags[pool.Key]) {
				t.Fatalf("rule %s, tags %q: owner %+v, want the pool %q", pool.Key, tags, got, tags[pool.Key])
			}
		}
	}
	if pools < 6 {
		t.Errorf("%d pool rules, want the node pools of all three clouds", pools)
	}
}

// TestProtectOwnersPerCloud: the controllers each cloud's tags name (its
// autoscalers, batch services, HPC clusters and desktop pools), registered
// by its adapter, make the one protection decision leave the machine to
// its owner; pkg/protect itself names no cloud.
func TestProtectOwnersPerCloud(t *testing.T) {
	p := protect.DefaultPolicy()
	for _, c := range []struct {
		p    fleet.Provider
		id   string
		tags map[string]string
		kind fleet.OwnerKind
	}{
		{fleet.AWS, "i-1", map[string]string{"aws:autoscaling:groupName": "asg"}, fleet.OwnerAutoScalingGroup},
		{fleet.AWS, "i-2", map[string]string{"eks:nodegroup-name": "gpu"}, fleet.OwnerEKSNodeGroup},
		{fleet.AWS, "i-3", map[string]string{"k8s.io/cluster-autoscaler/enabled": "true"}, fleet.OwnerClusterAutoscaler},
		{fleet.AWS, "i-4", map[string]string{"karpenter.sh/nodepool": "gpu"}, fleet.OwnerKarpenter},
		{fleet.AWS, "i-5", map[string]string{"kubernetes.io/cluster/ml": "owned"}, fleet.OwnerKubernetes},
		{fleet.AWS, "i-6", map[string]string{"parallelcluster:node-type": "Compute"}, fleet.OwnerParallelCluster},
		{fleet.AWS, "i-7", map[string]string{"aws:batch:compute-environment": "ce"}, fleet.OwnerBatch},
		{fleet.Azure, "vm-1", map[string]string{"poolName": "gpupool"}, fleet.OwnerAKSNodePool},
		{fleet.Azure, "vm-2", map[string]string{"aks-managed-orchestrator": "1.29"}, fleet.OwnerAKSNodePool},
		{fleet.Azure, "vm-3", map[string]string{"BatchAccountName": "acct"}, fleet.OwnerAzureBatch},
		{fleet.Azure, "vm-4", map[string]string{"cm-resource-parent": "/subscriptions/s/resourceGroups/r/providers/Microsoft.DesktopVirtualization/hostpools/hp"}, fleet.OwnerDesktopPool},
		{fleet.Azure, "vm-5", map[string]string{"azureml.computeName": "c"}, fleet.OwnerAzureML},
		{fleet.Azure, "vm-6", map[string]string{"ClusterId": "cyclecloud-hpc"}, fleet.OwnerCycleCloud},
		{fleet.Azure, "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines/0", nil, fleet.OwnerVMSS},
		{fleet.GCP, "g-1", map[string]string{"goog-gke-node": ""}, fleet.OwnerGKENodePool},
		{fleet.GCP, "g-2", map[string]string{"goog-dataproc-cluster-uuid": "u"}, fleet.OwnerDataproc},
		{fleet.GCP, "g-3", map[string]string{"goog-batch-job-uid": "j"}, fleet.OwnerGCPBatch},
		{fleet.GCP, "g-4", map[string]string{"slurm-cluster-name": "hpc"}, fleet.OwnerSlurm},
		{fleet.GCP, "g-6", map[string]string{"goog-managed-by": "vertex-ai"}, fleet.OwnerController},
	} {
		in := &fleet.Instance{ID: c.id, Provider: c.p, Tags: c.tags}
		f := protect.Static(in, p)
		if f == nil || f.Reason != protect.ReasonManaged || f.Owner.Kind != c.kind {
			t.Errorf("%s %s %v: got %+v, want managed by %s", c.p, c.id, c.tags, f, c.kind)
		}
	}
}
