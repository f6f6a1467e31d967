package gcp

import (
	"strings"

	"github.com/gpufinops/gpufinops/providers"
)

// Billing is what Google Cloud's FOCUS export (the BigQuery FOCUS view of
// the billing export) says about GCP: ProviderName "Google Cloud", resource
// ids as full resource names or self-links; and the adapter's warehouse,
// the export's BigQuery table.
func Billing() *providers.Billing {
	return &providers.Billing{
		FOCUSName:           "Google Cloud",
		FOCUSNames:          []string{"Google Cloud Platform", "GCP"},
		FOCUSNameWords:      []string{"google"},
		NormalizeResourceID: NormalizeResourceID,
		Warehouse:           bigQueryWarehouse(),
	}
}

// NormalizeResourceID is the id the bill and the fleet share: a full
// resource name (//compute.googleapis.com/projects/…) or a self-link
// (https://www.googleapis.com/compute/v1/projects/…) becomes
// projects/P/zones/Z/instances/NAME; anything else is kept.
func NormalizeResourceID(id string) string {
	if i := strings.Index(id, "projects/"); i >= 0 && strings.Contains(id[:i], "googleapis.com") {
		return id[i:]
	}
	return id
}
