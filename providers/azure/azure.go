// Package azure registers what gpufinops knows of Microsoft Azure ahead of
// its adapter: the tags Azure services put on the instances they manage and
// how Azure sells commitments. Fleet files with Azure instances use them;
// scanning Azure needs the adapter, which adds New, its options, doctor
// checks and policy to Registration.
package azure

import (
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

func init() { providers.Register(Registration()) }

// Registration is Azure's entry in the registry.
func Registration() *providers.RegInfo {
	return &providers.RegInfo{
		Name:        fleet.Azure,
		Description: "Microsoft Azure (fleet files only: this build has no Azure adapter yet)",
		OwnerRules:  OwnerRules,
		Purchase:    &providers.Purchase{Plan: pricing.Reservation, Name: "reservation"},
	}
}

// OwnerRules are the tags of AKS node pools, Azure Machine Learning and
// scale sets.
var OwnerRules = []fleet.OwnerRule{
	{Provider: fleet.Azure, Key: "aks-managed-", Prefix: true, Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "kubernetes.azure.com/", Prefix: true, Kind: fleet.OwnerAKSNodePool},
	{Provider: fleet.Azure, Key: "azureml", Prefix: true, Kind: fleet.OwnerAzureML},
	{Provider: fleet.Azure, Key: "virtualMachineScaleSet", Kind: fleet.OwnerVMSS},
	{Provider: fleet.Azure, IDContains: "/virtualMachineScaleSets/", Kind: fleet.OwnerVMSS},
}
