package analyze

import (
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// focusProviderName is -o focus's ProviderName of a provider: the one its
// adapter registers (the name the cloud's own FOCUS export writes).
func focusProviderName(p string) string { return providers.FOCUSName(fleet.Provider(p)) }
