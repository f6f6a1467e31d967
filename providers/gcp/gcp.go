// Package gcp is the Google Cloud adapter: GPU VMs from Compute Engine's
// aggregated instance listing, their GPU utilization from the Ops Agent's
// metrics in Cloud Monitoring, live prices from the Cloud Billing Catalog,
// and stopping idle VMs, all through cloud.google.com/go. GCP's quirks stay
// in this package.
package gcp

import "github.com/gpufinops/gpufinops/pkg/fleet"

// OwnerRules are the labels of GKE node pools, Dataproc, Batch, Slurm
// clusters, Vertex AI, managed instance groups and other Google-managed
// controllers (goog-managed-by) (whose created-by metadata the adapter reads into
// a tag of the same name).
//
// The labels that name the pool or cluster come first: a GKE node carries
// the marker goog-gke-node (no value) beside goog-k8s-node-pool-name, and
// the owner is the pool, in its cluster, not the marker.
var OwnerRules = []fleet.OwnerRule{
	{Provider: fleet.GCP, Key: "goog-k8s-node-pool-name", Kind: fleet.OwnerGKENodePool, ClusterKeys: gkeClusterKeys},
	{Provider: fleet.GCP, Key: "cloud.google.com/gke-nodepool", Kind: fleet.OwnerGKENodePool, ClusterKeys: gkeClusterKeys},
	{Provider: fleet.GCP, Key: "goog-k8s-cluster-name", Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "goog-dataproc-cluster-name", Kind: fleet.OwnerDataproc},
	{Provider: fleet.GCP, Key: "goog-batch-", Prefix: true, Kind: fleet.OwnerGCPBatch},
	{Provider: fleet.GCP, Key: "batch-job-id", Kind: fleet.OwnerGCPBatch},
	{Provider: fleet.GCP, Key: "slurm-cluster-name", Kind: fleet.OwnerSlurm},
	{Provider: fleet.GCP, Key: "slurm-instance-role", Kind: fleet.OwnerSlurm},
	{Provider: fleet.GCP, Key: "goog-gke-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "goog-k8s-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "gke-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "goog-dataproc-", Prefix: true, Kind: fleet.OwnerDataproc},
	{Provider: fleet.GCP, Key: "goog-vertex-", Prefix: true, Kind: fleet.OwnerVertexAI},
	{Provider: fleet.GCP, Key: "created-by", ValueContains: "instanceGroupManagers", Kind: fleet.OwnerMIG},
	{Provider: fleet.GCP, IDContains: "/instanceGroupManagers/", Kind: fleet.OwnerMIG},
	{Provider: fleet.GCP, Key: "goog-managed-by", Kind: fleet.OwnerController},
}

// gkeClusterKeys are the labels that name a GKE node's cluster.
var gkeClusterKeys = []string{"goog-k8s-cluster-name"}
