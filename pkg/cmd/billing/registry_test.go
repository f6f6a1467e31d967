package billing

// The command reads bills as the binary does: the clouds' FOCUS names,
// resource ids and warehouse schemes come from the adapters' registrations,
// which the production wiring (the factory, through providers/all) makes.
import _ "github.com/gpufinops/gpufinops/pkg/cmd/factory"
