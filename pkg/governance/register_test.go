package governance

import "github.com/gpufinops/gpufinops/pkg/fleet"

// GCP registers its lower-case labels (providers/gcp); these tests do not
// import the adapter, so they record the same fact.
func init() { fleet.RegisterLowercaseTags(fleet.GCP) }
