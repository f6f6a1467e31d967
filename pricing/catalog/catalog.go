// Package catalog is the embedded, dated catalog of GPU specs, instance types,
// prices and spot advice. STUB: being built.
package catalog

import (
	"errors"

	"github.com/gpufinops/gpufinops/pricing"
)

// Embedded returns the catalog built into the binary.
func Embedded() (pricing.Catalog, error) { return nil, errors.New("catalog: not built yet") }
