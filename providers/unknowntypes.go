package providers

import (
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// UnknownTypesCheck is doctor's word on a scope's listed instances whose
// types cat lacks and the cloud's answer does not fully describe
// (pricing.UnknownTypes, with no live prices): a warning naming each type
// and what is missing, or nothing. A scan keeps such instances, prices them
// from the cloud's live prices where it can, and warns of the rest.
func UnknownTypesCheck(instances []fleet.Instance, cat pricing.Catalog) []Check {
	if cat == nil || len(instances) == 0 {
		return nil
	}
	ws := pricing.UnknownTypes(&fleet.Fleet{Instances: instances}, cat, cat)
	if len(ws) == 0 {
		return nil
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Reason
	}
	return []Check{{
		Name:   "catalog",
		Method: "the scope's GPU instances against the catalog",
		Status: CheckWarn,
		Detail: strings.Join(parts, "; "),
		Fix: "analyze and inventory keep these instances: they price them from the cloud's live prices where it publishes them " +
			"and warn of the rest (exit code 3); in a fleet file, give gpu.model, gpu.count and hourlyPrice",
	}}
}
