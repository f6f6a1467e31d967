// Package azure is the Azure adapter: GPU VMs (and uniform scale-set
// members) from Resource Graph with the ARM VM list as fallback, their GPU
// count from Resource SKUs and model from a table of size names, GPU
// utilization from Azure Monitor custom metrics (Telegraf nvidia_smi) read
// with the batch metrics API, live prices from the Retail Prices API, and
// deallocating idle VMs, all through azure-sdk-for-go. Azure's quirks stay
// in this package.
package azure

import "github.com/gpufinops/gpufinops/pkg/fleet"

func init() { register() }

// OwnerRules are the tags of AKS node pools, Azure Machine Learning, Batch
// pools, CycleCloud clusters, Virtual Desktop host pools and scale sets. The tags that name the pool come first: an AKS node carries
// several aks-managed-* tags (cluster name, operation id, orchestrator) and
// the owner is the pool, in its cluster.
var OwnerRules = []fleet.OwnerRule{
	{Provider: fleet.Azure, Key: "aks-managed-poolName", Kind: fleet.OwnerAKSNodePool, ClusterKeys: aksClusterKeys},
	{Provider: fleet.Azure, Key: "kubernetes.azure.com/agentpool", Kind: fleet.OwnerAKSNodePool, ClusterKeys: aksClusterKeys},
	{Provider: fleet.Azure, Key: "poolName", Kind: fleet.OwnerAKSNodePool, ClusterKeys: []string{"aks-managed-cluster-name", "clusterName"}},
	{Provider: fleet.Azure, Key: "aks-managed-cluster-name", Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "kubernetes.azure.com/cluster", Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "BatchAccountName", Kind: fleet.OwnerAzureBatch},
	{Provider: fleet.Azure, Key: "BatchPoolName", Kind: fleet.OwnerAzureBatch},
	{Provider: fleet.Azure, Key: "batch-pool-", Prefix: true, Kind: fleet.OwnerAzureBatch},
	{Provider: fleet.Azure, Key: "cm-resource-parent", ValueContains: "hostpools", Kind: fleet.OwnerDesktopPool},
	{Provider: fleet.Azure, Key: "hostpool", Prefix: true, Kind: fleet.OwnerDesktopPool},
	{Provider: fleet.Azure, Key: "CycleOwner", Kind: fleet.OwnerCycleCloud},
	{Provider: fleet.Azure, Key: "ClusterId", ValueContains: "cyclecloud", Kind: fleet.OwnerCycleCloud},
	{Provider: fleet.Azure, Key: "aks-managed-", Prefix: true, Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "kubernetes.azure.com/", Prefix: true, Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "azureml", Prefix: true, Kind: fleet.OwnerAzureML},
	{Provider: fleet.Azure, Key: "virtualMachineScaleSet", Kind: fleet.OwnerVMSS},
	{Provider: fleet.Azure, IDContains: "/virtualMachineScaleSets/", Kind: fleet.OwnerVMSS},
}

// aksClusterKeys are the tags that name an AKS node's cluster.
var aksClusterKeys = []string{"aks-managed-cluster-name", "kubernetes.azure.com/cluster"}
