// Package purchasetest holds, for engine and command tests, what each cloud
// registers as its commitment (providers.RegInfo.Purchase): those tests may
// not import the adapters, and the engine itself knows no cloud. A factory
// test holds these equal to the registry.
package purchasetest

import (
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// Purchases are each cloud's commitment kind (policy.commitment.plans), its
// payment option and its name, in the form recommend.Policy.WithPurchases
// takes. Each call returns fresh maps.
func Purchases() (plans, payments, names map[string]string) {
	aws, azure, gcp := string(fleet.AWS), string(fleet.Azure), string(fleet.GCP)
	return map[string]string{aws: string(pricing.ComputeSavingsPlan), azure: string(pricing.Reservation), gcp: string(pricing.ResourceCUD)},
		map[string]string{aws: pricing.PayNoUpfront},
		map[string]string{aws: "Compute Savings Plan", azure: "reservation", gcp: "committed use discount"}
}
