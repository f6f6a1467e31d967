package aws

import (
	"strings"

	"github.com/gpufinops/gpufinops/providers"
)

// Billing is what AWS's FOCUS export (Data Exports, FOCUS 1.0 and later)
// says about AWS: ProviderName "AWS", resource ids as ARNs; and the
// adapter's warehouse, the export's Athena table.
func Billing() *providers.Billing {
	return &providers.Billing{
		FOCUSName:           "AWS",
		FOCUSNames:          []string{"Amazon Web Services"},
		FOCUSNameWords:      []string{"amazon"},
		NormalizeResourceID: NormalizeResourceID,
		Warehouse:           athenaWarehouse(),
	}
}

// NormalizeResourceID is the id the bill and the fleet share: an EC2 ARN's
// resource id (arn:aws:ec2:REGION:ACCOUNT:instance/i-0abc is i-0abc); any
// other ARN (a SageMaker endpoint or notebook instance, which the fleet
// names by its ARN) and anything else as it is.
func NormalizeResourceID(id string) string {
	if !strings.HasPrefix(id, "arn:") {
		return id
	}
	parts := strings.SplitN(id, ":", 6)
	if len(parts) != 6 || parts[2] != "ec2" {
		return id
	}
	res := parts[5]
	if i := strings.LastIndexAny(res, "/:"); i >= 0 {
		res = res[i+1:]
	}
	return res
}
