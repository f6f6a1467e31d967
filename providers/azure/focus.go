package azure

import (
	"strings"

	"github.com/gpufinops/gpufinops/providers"
)

// Billing is what the Microsoft Cost Management FOCUS export says about
// Azure: ProviderName "Microsoft", resource ids as ARM ids, whose case
// varies between the bill and the APIs. The adapter reads no warehouse.
func Billing() *providers.Billing {
	return &providers.Billing{
		FOCUSName:           "Microsoft",
		FOCUSNames:          []string{"Microsoft Azure", "Azure"},
		FOCUSNameWords:      []string{"microsoft", "azure"},
		NormalizeResourceID: strings.ToLower,
	}
}
