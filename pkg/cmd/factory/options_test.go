package factory

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/providers"
)

// An adapter's options: its flags win over providers.<cloud>.*, which wins
// over its defaults; --region wins over providers.<cloud>.regions.
func TestAdapterOptions(t *testing.T) {
	ri, ok := providers.Find(fleet.AWS)
	if !ok {
		t.Fatal("aws is not registered")
	}
	cfg, err := config.Load(config.Options{LookupEnv: func(k string) (string, bool) {
		v, ok := map[string]string{
			"GPUFINOPS_PROVIDERS_AWS_PROFILES":          "cfg-a,cfg-b",
			"GPUFINOPS_PROVIDERS_AWS_ROLE_ARNS":         "arn:aws:iam::1:role/r",
			"GPUFINOPS_PROVIDERS_AWS_METRICS_NAMESPACE": "GPU",
			"GPUFINOPS_PROVIDERS_AWS_REGIONS":           "eu-west-1",
			"GPUFINOPS_PROVIDERS_AWS_ENDPOINT":          "http://sim",
			"GPUFINOPS_PROVIDERS_AWS_CONCURRENCY":       "3",
		}[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Unix(0, 0) }
	sc := &scanner{now: now}
	for _, tc := range []struct {
		args     []string
		profiles []string
		regions  []string
	}{
		{nil, []string{"cfg-a", "cfg-b"}, []string{"eu-west-1"}},
		{[]string{"--profile", "flag", "--region", "us-east-1"}, []string{"flag"}, []string{"us-east-1"}},
	} {
		in := cmdutil.FleetFlags{}
		cmd := &cobra.Command{Use: "x", Run: func(*cobra.Command, []string) {}}
		cmdutil.AddScopeFlags(cmd, &in, "scan")
		cmd.SetArgs(append([]string{"--provider", "aws"}, tc.args...))
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		in.LookbackDays = 7
		o := sc.options(ri, in, cfg)
		if o.Endpoint != "http://sim" || o.Concurrency != 3 || !reflect.DeepEqual(o.Regions, tc.regions) || o.Lookback != 7*24*time.Hour {
			t.Errorf("%v: options %+v", tc.args, o)
		}
		if got := o.Adapter.Strings("profiles"); !reflect.DeepEqual(got, tc.profiles) {
			t.Errorf("%v: profiles %v, want %v", tc.args, got, tc.profiles)
		}
		if o.Adapter.String("metrics_namespace") != "GPU" || !reflect.DeepEqual(o.Adapter.Strings("role_arns"), []string{"arn:aws:iam::1:role/r"}) {
			t.Errorf("%v: adapter values %v", tc.args, o.Adapter)
		}
	}
	// Without configuration, the adapter's defaults.
	o := sc.options(ri, cmdutil.FleetFlags{Providers: []string{"aws"}, LookbackDays: 1}, &config.Config{})
	if o.Adapter.String("metrics_namespace") != "CWAgent" || o.Concurrency != 8 || len(o.Adapter.Strings("profiles")) != 0 {
		t.Errorf("defaults %+v", o)
	}
}

// The commitments the engine and command tests are given
// (purchasetest.Purchases) are what the clouds register, which is what the
// binary uses; and the configuration's defaults are those.
func TestRegisteredPurchasesMatchTestData(t *testing.T) {
	plans, payments, names := providers.PurchaseDefaults()
	wp, wpay, wn := purchasetest.Purchases()
	if !reflect.DeepEqual(plans, wp) || !reflect.DeepEqual(payments, wpay) || !reflect.DeepEqual(names, wn) {
		t.Errorf("registered %v %v %v\ntest data %v %v %v", plans, payments, names, wp, wpay, wn)
	}
	cfg, err := config.Load(config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Policy.Commitment; !reflect.DeepEqual(plans, c.Plans) || !reflect.DeepEqual(payments, c.Payments) || !reflect.DeepEqual(names, c.Names) {
		t.Errorf("configuration defaults %v %v %v, want the registered %v %v %v", c.Plans, c.Payments, c.Names, plans, payments, names)
	}
	if c := recommend.DefaultPolicy().Commitment; len(c.Plans)+len(c.Payments)+len(c.Names) != 0 {
		t.Errorf("the engine's own defaults name clouds: %v %v %v", c.Plans, c.Payments, c.Names)
	}
}
