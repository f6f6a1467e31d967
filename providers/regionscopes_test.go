package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestRegionScopes(t *testing.T) {
	accounts := []Scope{{Provider: fleet.AWS, Account: "111", Profile: "dev"}, {Provider: fleet.AWS, Account: "222"}}
	listed := map[string][]string{"111": {"eu-west-1", "us-east-1"}, "222": {"us-west-2"}}
	list := func(fail map[string]error) func(context.Context, Scope) ([]string, error) {
		return func(_ context.Context, s Scope) ([]string, error) {
			if err := fail[s.Account]; err != nil {
				return nil, err
			}
			return listed[s.Account], nil
		}
	}
	names := func(ss []Scope) string {
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%s/%s/%s", s.Account, s.Profile, s.Region))
		}
		return strings.Join(out, " ")
	}
	ctx := context.Background()

	got, failed, err := RegionScopes(ctx, accounts, nil, list(nil))
	if err != nil || len(failed) != 0 || names(got) != "111/dev/eu-west-1 111/dev/us-east-1 222//us-west-2" {
		t.Errorf("listed: %s, %v, %v", names(got), failed, err)
	}
	got, _, err = RegionScopes(ctx, accounts, []string{"ap-south-1"}, list(map[string]error{"111": errors.New("never asked")}))
	if err != nil || names(got) != "111/dev/ap-south-1 222//ap-south-1" {
		t.Errorf("configured regions are not listed: %s, %v", names(got), err)
	}
	got, failed, err = RegionScopes(ctx, accounts, nil, list(map[string]error{"111": errors.New("denied")}))
	if err != nil || names(got) != "222//us-west-2" || len(failed) != 1 || failed[0].Scope.Account != "111" || failed[0].Scope.Region != "" ||
		failed[0].Err.Error() != "listing regions: denied" {
		t.Errorf("one account failing: %s, %v, %v", names(got), failed, err)
	}
	_, _, err = RegionScopes(ctx, accounts, nil, list(map[string]error{"111": errors.New("denied"), "222": errors.New("gone")}))
	if err == nil || err.Error() != "aws dev: listing regions: denied" {
		t.Errorf("every account failing: %v", err)
	}
	_, _, err = RegionScopes(ctx, accounts, nil, list(map[string]error{"222": fmt.Errorf("no token: %w", ErrCredentials)}))
	if !errors.Is(err, ErrCredentials) || err.Error() != "aws 222: listing regions: no token: "+ErrCredentials.Error() {
		t.Errorf("credentials fail the call: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := RegionScopes(cancelled, accounts, nil, list(map[string]error{"111": context.Canceled})); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
