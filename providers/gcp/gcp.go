// Package gcp registers what gpufinops knows of Google Cloud ahead of its
// adapter: the labels GCP services put on the instances they manage and how
// GCP sells commitments. Fleet files with GCP instances use them; scanning
// GCP needs the adapter, which adds New, its options, doctor checks and
// policy to Registration.
package gcp

import (
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

func init() { providers.Register(Registration()) }

// Registration is GCP's entry in the registry.
func Registration() *providers.RegInfo {
	return &providers.RegInfo{
		Name:        fleet.GCP,
		Description: "Google Cloud (fleet files only: this build has no GCP adapter yet)",
		OwnerRules:  OwnerRules,
		Purchase:    &providers.Purchase{Plan: pricing.ResourceCUD, Name: "committed use discount"},
		// Labels allow only lower-case letters, digits, '-' and '_'.
		LowercaseTags: true,
	}
}

// OwnerRules are the labels of GKE node pools, Dataproc, Vertex AI and
// managed instance groups.
var OwnerRules = []fleet.OwnerRule{
	{Provider: fleet.GCP, Key: "goog-gke-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "goog-k8s-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "gke-", Prefix: true, Kind: fleet.OwnerGKENodePool},
	{Provider: fleet.GCP, Key: "goog-dataproc-", Prefix: true, Kind: fleet.OwnerDataproc},
	{Provider: fleet.GCP, Key: "goog-vertex-", Prefix: true, Kind: fleet.OwnerVertexAI},
	{Provider: fleet.GCP, Key: "created-by", ValueContains: "instanceGroupManagers", Kind: fleet.OwnerMIG},
	{Provider: fleet.GCP, IDContains: "/instanceGroupManagers/", Kind: fleet.OwnerMIG},
}
