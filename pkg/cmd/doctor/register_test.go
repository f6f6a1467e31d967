package doctor

import (
	"context"
	"errors"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The tests link no cloud adapter: a stand-in registration of "aws" gives
// doctor its default cloud and the words of its help; the tests' Factory
// builds the fake provider itself.
func init() {
	providers.Register(&providers.RegInfo{
		Name:        fleet.AWS,
		Description: "stand-in for the tests",
		Doctor: providers.DoctorInfo{
			Default: true,
			Checks:  "the credentials (sts:GetCallerIdentity) and what the fake provider reports",
		},
		New: func(context.Context, providers.Options) (providers.Provider, error) {
			return nil, errors.New("the doctor tests build their providers through the Factory")
		},
	})
}
