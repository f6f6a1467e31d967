package config

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// acme is a cloud registered for the tests: the common options and two of
// its own, one checked.
func init() {
	providers.Register(&providers.RegInfo{Name: "acme", New: func(context.Context, providers.Options) (providers.Provider, error) { return nil, nil }, Options: []providers.Option{
		{Name: "profiles", Flag: "profile", Default: []string{}},
		{Name: "namespace", Default: "Agent", Validate: func(v any) error {
			switch s := v.(string); {
			case s == "":
				return errors.New("empty namespace")
			case strings.Contains(s, "/"):
				return fmt.Errorf("%q: no slashes", s)
			}
			return nil
		}},
	}})
	// A cloud with data only has no section.
	providers.Register(&providers.RegInfo{Name: "dataonly"})
}

func TestProviderDefaults(t *testing.T) {
	cfg, err := Load(Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Values{"endpoint": "", "regions": []string{}, "concurrency": 8, "profiles": []string{}, "namespace": "Agent"}
	if got := cfg.Provider("acme"); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %v, want %v", got, want)
	}
	if cfg.Provider("oracle") != nil || cfg.Provider("dataonly") != nil || len(cfg.Warnings) != 0 {
		t.Errorf("unregistered cloud %v, warnings %v", cfg.Provider("oracle"), cfg.Warnings)
	}
	keys := strings.Join(Keys(), " ")
	for _, k := range []string{"providers.acme.endpoint", "providers.acme.regions", "providers.acme.concurrency", "providers.acme.profiles", "providers.acme.namespace"} {
		if !strings.Contains(keys, k) {
			t.Errorf("Keys() lacks %s", k)
		}
	}
}

func TestProviderSections(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		want       providers.Values
		warnings   []string
	}{
		{name: "file", file: "providers:\n  acme:\n    profiles: [prod, dev]\n    namespace: GPU\n    concurrency: 4\n    regions: eu-west-1, us-east-1\n",
			want: providers.Values{"profiles": []string{"prod", "dev"}, "namespace": "GPU", "concurrency": 4, "regions": []string{"eu-west-1", "us-east-1"}}},
		{name: "environment over file", file: "providers: {acme: {profiles: [prod], endpoint: http://a}}\n",
			env:  map[string]string{"GPUFINOPS_PROVIDERS_ACME_PROFILES": "x, y", "GPUFINOPS_PROVIDERS_ACME_CONCURRENCY": "2"},
			want: providers.Values{"profiles": []string{"x", "y"}, "endpoint": "http://a", "concurrency": 2}},
		{name: "deprecated section", file: "acme:\n  endpoint: http://sim\n  concurrency: 3\n",
			want:     providers.Values{"endpoint": "http://sim", "concurrency": 3},
			warnings: []string{`the "acme" section is deprecated: move its keys under providers.acme`}},
		{name: "providers wins over the deprecated section", file: "acme: {concurrency: 3}\nproviders: {acme: {concurrency: 5}}\n",
			want: providers.Values{"concurrency": 5}, warnings: []string{"deprecated"}},
		{name: "deprecated environment", env: map[string]string{"GPUFINOPS_ACME_ENDPOINT": "http://old"},
			want: providers.Values{"endpoint": "http://old"}, warnings: []string{"environment GPUFINOPS_ACME_ENDPOINT is deprecated: use GPUFINOPS_PROVIDERS_ACME_ENDPOINT"}},
		{name: "new environment wins over the deprecated one", env: map[string]string{"GPUFINOPS_ACME_ENDPOINT": "http://old", "GPUFINOPS_PROVIDERS_ACME_ENDPOINT": "http://new"},
			want: providers.Values{"endpoint": "http://new"}, warnings: []string{"deprecated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := ""
			if tc.file != "" {
				file = write(t, "c.yaml", tc.file)
			}
			cfg, err := Load(Options{File: file, LookupEnv: env(tc.env)})
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Provider("acme")
			for k, v := range tc.want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
			if len(cfg.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %q", cfg.Warnings, tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.Contains(cfg.Warnings[i], w) {
					t.Errorf("warning %q lacks %q", cfg.Warnings[i], w)
				}
			}
		})
	}
}

// A cloud's registered purchase names are the policy's defaults; the file wins.
func TestPurchaseDefaults(t *testing.T) {
	gcp := &providers.RegInfo{Name: "gcp", Purchase: &providers.Purchase{Plan: pricing.ResourceCUD, Payment: pricing.PayMonthly, Name: "CUD"}}
	cfg, err := Load(Options{LookupEnv: env(nil), Providers: []*providers.RegInfo{gcp}})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Policy.Commitment
	if c.Plans["gcp"] != "resource-cud" || c.Payments["gcp"] != "monthly" || c.Names["gcp"] != "CUD" {
		t.Errorf("commitment %+v", c)
	}
	file := write(t, "c.yaml", "policy: {commitment: {names: {gcp: flexible CUD}}}\n")
	if cfg, err = Load(Options{File: file, LookupEnv: env(nil), Providers: []*providers.RegInfo{gcp}}); err != nil {
		t.Fatal(err)
	}
	if n := cfg.Policy.Commitment.Names["gcp"]; n != "flexible CUD" {
		t.Errorf("name %q, want the file's", n)
	}
}
