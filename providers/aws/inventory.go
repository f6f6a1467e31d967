package aws

import (
	"context"
	"errors"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// ListGPUInstances lists a scope's GPU and accelerator instances. (Being built.)
func (p *Provider) ListGPUInstances(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	return nil, errors.New("aws: inventory not built yet")
}
