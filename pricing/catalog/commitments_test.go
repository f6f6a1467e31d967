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
