package catalog

import (
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

func TestCommitmentRates(t *testing.T) {
	c := embeddedForTest(t).(pricing.CommitmentCatalog)
	cases := []struct {
		name     string
		q        pricing.CommitmentQuery
		hourly   string
		discount float64
		approx   bool
		line     string
	}{
		{"p5 compute SP 1y no upfront = convertible RI", pricing.CommitmentQuery{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Kind: pricing.ComputeSavingsPlan, Term: "1y", Payment: pricing.PayNoUpfront}, "43.344", 21.25, true, ":7701 "},
		{"p5 EC2 instance SP 3y all upfront = standard RI", pricing.CommitmentQuery{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Kind: pricing.EC2InstanceSavingsPlan, Term: "3y", Payment: pricing.PayAllUpfront}, "20.695053", 62.40, true, ":7706 "},
		{"p5 convertible RI, case-insensitive names", pricing.CommitmentQuery{Provider: fleet.AWS, Region: "US-EAST-1", InstanceType: "P5.48XLARGE", Kind: pricing.ConvertibleRI, Term: "3y", Payment: pricing.PayPartialUpfront}, "37.427184", 32, false, ":7705 "},
		{"azure H100 reservation 1y, any payment", pricing.CommitmentQuery{Provider: fleet.Azure, Region: "australiaeast", InstanceType: "Standard_NC40ads_H100_v5", Kind: pricing.Reservation, Term: "1y"}, "7.590753", 25, false, ":132 "},
		{"azure H100 reservation 3y", pricing.CommitmentQuery{Provider: fleet.Azure, Region: "australiaeast", InstanceType: "standard_nc40ads_h100_v5", Kind: pricing.Reservation, Term: "3y", Payment: pricing.PayUpfrontOrMonthly}, "5.566553", 45, false, ":133 "},
		{"gcp a2 CUD 1y", pricing.CommitmentQuery{Provider: fleet.GCP, Region: "us-central1", InstanceType: "a2-highgpu-1g", Kind: pricing.ResourceCUD, Term: "1y"}, "2.314207", 37, false, ":62 "},
		{"gcp a2 CUD 3y", pricing.CommitmentQuery{Provider: fleet.GCP, Region: "us-central1", InstanceType: "a2-highgpu-1g", Kind: pricing.ResourceCUD, Term: "3y", Payment: pricing.PayMonthly}, "1.285708", 65, false, ":63 "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := c.CommitmentRate(tc.q)
			if !ok {
				t.Fatal("no rate")
			}
			if r.Hourly.String() != tc.hourly || math.Abs(r.DiscountPercent-tc.discount) > 0.01 {
				t.Errorf("rate %s (%v%%), want %s (%v%%)", r.Hourly, r.DiscountPercent, tc.hourly, tc.discount)
			}
			if (r.Approximation != "") != tc.approx || r.Kind != tc.q.Kind {
				t.Errorf("approximation %q kind %s", r.Approximation, r.Kind)
			}
			if !strings.Contains(r.Origin, tc.line) || r.AsOf == "" || r.Source == "" {
				t.Errorf("origin %q asOf %q source %q", r.Origin, r.AsOf, r.Source)
			}
		})
	}
	for _, q := range []pricing.CommitmentQuery{
		{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5e.48xlarge", Kind: pricing.ComputeSavingsPlan, Term: "1y"}, // no RI block in the source
		{Provider: fleet.AWS, Region: "eu-west-1", InstanceType: "p5.48xlarge", Kind: pricing.ComputeSavingsPlan, Term: "1y"},
		{Provider: fleet.Azure, Region: "eastus", InstanceType: "Standard_NC40ads_H100_v5", Kind: pricing.Reservation, Term: "1y"}, // APAC only
		{Provider: fleet.GCP, Region: "us-central1", InstanceType: "a2-ultragpu-1g", Kind: pricing.ResourceCUD, Term: "1y"},
		{Provider: fleet.GCP, Region: "us-central1", InstanceType: "a2-highgpu-1g", Kind: pricing.ResourceCUD, Term: "5y"},
		{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Kind: pricing.ComputeSavingsPlan, Term: "1y", Payment: "weekly"},
	} {
		if r, ok := c.CommitmentRate(q); ok {
			t.Errorf("%+v: rate %+v, want none", q, r)
		}
	}
}

func TestCommitmentFilesBadInput(t *testing.T) {
	head := "provider,region,instance_type_or_sku,gpu,term,payment_option,hourly_usd,on_demand_hourly_usd_if_present,discount_percent,source_repo,source_path,source_commit,source_date,commitment_type\n"
	for name, row := range map[string]string{
		"provider":  "oracle,r,t,g,1y,no_upfront,1,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"term":      "aws,r,t,g,2y,no_upfront,1,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"payment":   "aws,r,t,g,1y,weekly,1,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"NaN":       "aws,r,t,g,1y,no_upfront,NaN,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"negative":  "aws,r,t,g,1y,no_upfront,-1,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"Inf":       "aws,r,t,g,1y,no_upfront,1,+Inf,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"above OD":  "aws,r,t,g,1y,no_upfront,3,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
		"kind":      "aws,r,t,g,1y,no_upfront,1,2,50,x,y,abc,2025-01-01,mystery",
		"duplicate": "aws,r,t,g,1y,no_upfront,1,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared\naws,r,t,g,1y,no_upfront,1,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared",
	} {
		t.Run(name, func(t *testing.T) {
			l := &loader{fsys: fstest.MapFS{"f.csv": {Data: []byte(head + row + "\n")}}, c: &catalog{commitments: map[commitKey]pricing.CommitmentRate{}}}
			err := l.readCommitments("f.csv", sourceEntry{Name: "n", Origin: "o"})
			if err == nil || !strings.Contains(err.Error(), "f.csv:") {
				t.Fatalf("err = %v, want one naming f.csv:LINE", err)
			}
		})
	}
}

// FuzzCommitmentRows: any commitment file either loads, with every rate
// positive and at most its on-demand price, or fails with an error naming
// the file and line; it never panics.
func FuzzCommitmentRows(f *testing.F) {
	head := "provider,region,instance_type_or_sku,gpu,term,payment_option,hourly_usd,on_demand_hourly_usd_if_present,discount_percent,source_repo,source_path,source_commit,source_date,commitment_type\n"
	f.Add("aws,us-east-1,p5.48xlarge,8x H100,1y,no_upfront,43.344,55.04,21.25,r,p,2d0108c,2025-11-30T13:30:58+00:00,reserved_instance_convertible_linux_shared\n")
	f.Add("azure,australiaeast,Standard_NC40ads_H100_v5,H100,3y,\"reservation (upfront or monthly, same price)\",5.566553,10.121,45.00,r,p,0b6ed98,2026-09-29,reserved_vm_instance_linux\n")
	f.Add("gcp,us-central1,a2-highgpu-1g,1x a100,1y,monthly_billed_commitment,2.314207,3.673385,37.00,r,p,fd66b26,2026-07-30,resource_based_cud\n")
	f.Add("aws,us-east-1,p4d.24xlarge,8x A100,capacity_block,upfront_at_purchase,11.8,,,r,p,b3a54ae,2026-07-22,ec2_capacity_block_for_ml\n")
	f.Add("aws,r,t,g,1y,no_upfront,1e309,2,50,x,y,abc,2025-01-01,reserved_instance_standard_linux_shared\n\"unterminated")
	f.Fuzz(func(t *testing.T, rows string) {
		l := &loader{fsys: fstest.MapFS{"f.csv": {Data: []byte(head + rows)}}, c: &catalog{commitments: map[commitKey]pricing.CommitmentRate{}}}
		err := l.readCommitments("f.csv", sourceEntry{Name: "n", Origin: "o"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not start with the file name on one line", err)
			}
			return
		}
		for _, r := range l.c.commitments {
			if !r.Hourly.IsPositive() || (r.OnDemandHourly.IsPositive() && r.Hourly.GreaterThan(r.OnDemandHourly)) || math.IsNaN(r.DiscountPercent) || r.DiscountPercent < 0 || r.DiscountPercent >= 100 {
				t.Fatalf("rate %+v", r)
			}
		}
	})
}
