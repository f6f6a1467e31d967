package report

import (
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func price(p fleet.Provider, region, typ string, opt pricing.Option, hourly string) pricing.Price {
	return pricing.Price{
		Provider: p, Region: region, InstanceType: typ, Option: opt, Hourly: dec(hourly),
		Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "SkyPilot catalog (" + string(p) + ")", AsOf: "2026-11-01",
	}
}

const azureVM = "/subscriptions/0000-1111/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/infer-a100-01"

// testPlan is a hand-built plan: four instances (one unpriced), every kind
// once, two recommendations chained on one instance, and two warnings. Its
// figures are worked out by hand (hourly × hours, rounded to cents).
func testPlan() recommend.Plan {
	g5 := price(fleet.AWS, "us-east-1", "g5.12xlarge", pricing.OnDemand, "5.672")
	a2 := price(fleet.GCP, "us-central1", "a2-highgpu-8g", pricing.OnDemand, "29.3879")
	a2spot := price(fleet.GCP, "us-central1", "a2-highgpu-8g", pricing.Spot, "8.8164")
	a2spot.Zone = "us-central1-b"
	nc24 := price(fleet.Azure, "eastus", "Standard_NC24ads_A100_v4", pricing.OnDemand, "3.673")
	nc8 := price(fleet.Azure, "eastus", "Standard_NC8as_T4_v3", pricing.OnDemand, "0.752")

	recs := []recommend.Recommendation{
		{
			ID: "schedule-gpu-train-01", ResourceID: "gpu-train-01", Provider: fleet.GCP, Account: "ml-prod",
			Region: "us-central1", InstanceType: "a2-highgpu-8g", Kind: recommend.KindSchedule,
			Action: "Run on a schedule", Target: "Mon–Fri 07:00–19:00 UTC",
			CurrentMonthly: dec("21453.17"), ProjectedMonthly: dec("9169.02"), MonthlySavings: dec("12284.15"),
			Confidence: recommend.High, Risk: recommend.Low,
			RiskNotes: []string{"Jobs started outside the window wait for the next one."},
			Rationale: "Busy only on weekdays between 08:00 and 18:00 UTC over 28 days.",
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"busyHoursPercent": 35.7, "windowDays": 28},
				Thresholds:  map[string]float64{"idle.scheduleMaxBusyPercent": 60, "idle.scheduleMinSavingsPercent": 25},
				Prices:      []pricing.Price{a2},
				HoursBefore: 730, HoursAfter: 312,
				Formula: "29.3879 USD/h × 312 h = 9169.02 USD",
			},
		},
		{
			ID: "spot-gpu-train-01", ResourceID: "gpu-train-01", Provider: fleet.GCP, Account: "ml-prod",
			Region: "us-central1", InstanceType: "a2-highgpu-8g", Kind: recommend.KindSpot,
			Action: "Move to spot", Target: "spot",
			CurrentMonthly: dec("9169.02"), ProjectedMonthly: dec("2750.72"), MonthlySavings: dec("6418.30"),
			Confidence: recommend.Medium, Risk: recommend.High,
			RiskNotes: []string{"Preemption can stop a run at any time; the job checkpoints every 30 minutes."},
			Rationale: "Training job that checkpoints; spot is 70 % cheaper here.",
			Evidence: recommend.Evidence{
				Prices:      []pricing.Price{a2, a2spot},
				HoursBefore: 312, HoursAfter: 312,
				Formula: "8.8164 USD/h × 312 h = 2750.72 USD",
				Notes:   []string{"Priced after the schedule."},
			},
			After: "schedule-gpu-train-01",
		},
		{
			ID: "idle-stop-i-0a1b2c3d4e5f60001", ResourceID: "i-0a1b2c3d4e5f60001", Provider: fleet.AWS, Account: "111122223333",
			Region: "us-east-1", InstanceType: "g5.12xlarge", Kind: recommend.KindIdleStop,
			Action:         "Stop the instance",
			CurrentMonthly: dec("4140.56"), ProjectedMonthly: dec("0"), MonthlySavings: dec("4140.56"),
			Confidence: recommend.High, Risk: recommend.Low,
			Rationale: "GPU p95 2.1 % for 14 days, below the 15 % idle threshold.",
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"gpuUtilP95": 2.1, "windowHours": 336},
				Thresholds:  map[string]float64{"idle.gpuPercent": 15},
				Prices:      []pricing.Price{g5},
				HoursBefore: 730, HoursAfter: 0,
				Formula: "5.672 USD/h × 730 h = 4140.56 USD",
			},
		},
		{
			ID: "rightsize-infer-a100-01", ResourceID: azureVM, Provider: fleet.Azure, Account: "0000-1111",
			Region: "eastus", InstanceType: "Standard_NC24ads_A100_v4", Kind: recommend.KindRightsize,
			Action: "Move to a smaller GPU", Target: "Standard_NC8as_T4_v3",
			CurrentMonthly: dec("2681.29"), ProjectedMonthly: dec("548.96"), MonthlySavings: dec("2132.33"),
			Confidence: recommend.Medium, Risk: recommend.Medium,
			RiskNotes: []string{"T4 has 16 GiB per GPU | peak use was 11.2 GiB."},
			Rationale: `GPU p95 18 % | memory p95 14 %; "a T4 holds the model", with 20 % headroom.`,
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"gpuUtilP95": 18, "gpuMemP95": 14},
				Thresholds:  map[string]float64{"rightsize.gpuPercent": 50, "rightsize.gpuMemoryPercent": 40},
				Prices:      []pricing.Price{nc24, nc8},
				HoursBefore: 730, HoursAfter: 730,
				Formula: "0.752 USD/h × 730 h = 548.96 USD",
			},
		},
		{
			ID: "commitment-infer-a100-01", ResourceID: azureVM, Provider: fleet.Azure, Account: "0000-1111",
			Region: "eastus", InstanceType: "Standard_NC24ads_A100_v4", Kind: recommend.KindCommitment,
			Action: "Buy a 1-year reservation", Target: "1y reserved",
			CurrentMonthly: dec("548.96"), ProjectedMonthly: dec("356.82"), MonthlySavings: dec("192.14"),
			Confidence: recommend.High, Risk: recommend.Medium,
			RiskNotes: []string{"You pay for the term even if the instance goes away."},
			Rationale: "Runs 100 % of hours, above the 80 % threshold.",
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"runningPercent": 100},
				Thresholds:  map[string]float64{"commitment.minRunningPercent": 80, "commitment.discount": 0.35},
				Prices:      []pricing.Price{nc8},
				HoursBefore: 730, HoursAfter: 730,
				Formula: "548.96 USD × (1 − 0.35) = 356.82 USD",
			},
			After: "rightsize-infer-a100-01",
		},
	}

	inst := func(id string, p fleet.Provider, acct, region, typ, gpu string, n float64, pr *pricing.Price, cur, opt, sav string) recommend.InstanceCost {
		ic := recommend.InstanceCost{
			ResourceID: id, Provider: p, Account: acct, Region: region, InstanceType: typ, GPUModel: gpu, GPUCount: n,
			Lifecycle: fleet.OnDemand, State: fleet.Running, MonthlyHours: 730, Hourly: pr, Priced: pr != nil,
		}
		if pr != nil {
			ic.MonthlyCost, ic.OptimizedCost, ic.MonthlySavings = dec(cur), dec(opt), dec(sav)
		}
		return ic
	}
	instances := []recommend.InstanceCost{
		inst("i-0a1b2c3d4e5f60001", fleet.AWS, "111122223333", "us-east-1", "g5.12xlarge", "A10G", 4, &g5, "4140.56", "0", "4140.56"),
		inst("gpu-train-01", fleet.GCP, "ml-prod", "us-central1", "a2-highgpu-8g", "A100", 8, &a2, "21453.17", "2750.72", "18702.45"),
		inst(azureVM, fleet.Azure, "0000-1111", "eastus", "Standard_NC24ads_A100_v4", "A100", 1, &nc24, "2681.29", "356.82", "2324.47"),
		inst("i-0ffff0000aaaa0002", fleet.AWS, "111122223333", "ap-southeast-3", "p5e.48xlarge", "H200", 8, nil, "", "", ""),
	}

	return recommend.Plan{
		Instances:       instances,
		Recommendations: recs,
		Warnings: []recommend.Warning{
			{ResourceID: "i-0ffff0000aaaa0002", Code: recommend.WarnUnpriced, Message: "No on-demand price for p5e.48xlarge in ap-southeast-3; left out of the costs."},
			{ResourceID: "gpu-train-01", Code: recommend.WarnNoCheckpointing, Message: "Spot advice assumes the job resumes from its checkpoints."},
		},
		Summary: recommend.Summary{
			CurrentMonthly:   dec("28275.02"),
			OptimizedMonthly: dec("3107.54"),
			MonthlySavings:   dec("25167.48"),
			SavingsPercent:   dec("89.0"),
			InstanceCount:    4,
			GPUCount:         21,
			UnpricedCount:    1,
			SavingsByKind: map[recommend.Kind]decimal.Decimal{
				recommend.KindIdleStop:   dec("4140.56"),
				recommend.KindSchedule:   dec("12284.15"),
				recommend.KindRightsize:  dec("2132.33"),
				recommend.KindSpot:       dec("6418.30"),
				recommend.KindCommitment: dec("192.14"),
			},
		},
		Policy: testPolicy(),
	}
}

// testPolicy is spelled out rather than taken from DefaultPolicy, so that a
// change of defaults does not change the golden files.
func testPolicy() recommend.Policy {
	return recommend.Policy{
		Idle: recommend.IdlePolicy{GPUPercent: 15, ScheduleMaxBusyPercent: 60, ScheduleMinSavingsPercent: 25,
			ScheduleMinDays: 3, ScheduleBufferHours: 1},
		Rightsize: recommend.RightsizePolicy{GPUPercent: 50, GPUMemoryPercent: 40, HeadroomPercent: 20,
			HostCPUPercent: 30, HostMemoryPercent: 40, MinSavingsPercent: 10},
		Spot:           recommend.SpotPolicy{Workloads: []fleet.WorkloadType{fleet.Training, fleet.Batch}, MaxBandIndex: 2},
		Commitment:     recommend.CommitmentPolicy{Term: "1y", Discounts1y: map[string]float64{"aws": 0.35, "azure": 0.35, "gcp": 0.37}, Discounts3y: map[string]float64{"aws": 0.55, "azure": 0.55, "gcp": 0.55}},
		MinWindowHours: 168,
	}
}

func testMeta() Meta {
	return Meta{
		GeneratedAt: testutil.FixedNow,
		ToolVersion: "1.2.3",
		FleetName:   "ml-platform",
		FleetSource: "fleets/ml-platform.yaml",
		Catalog: []pricing.Source{
			{Name: "SkyPilot catalog (aws)", Provider: "aws", Origin: "https://github.com/skypilot-org/skypilot-catalog", AsOf: "2026-11-01"},
			{Name: "SkyPilot catalog (azure)", Provider: "azure", Origin: "https://github.com/skypilot-org/skypilot-catalog", AsOf: "2026-11-01"},
			{Name: "SkyPilot catalog (gcp)", Provider: "gcp", Origin: "https://github.com/skypilot-org/skypilot-catalog", AsOf: "2026-11-01"},
		},
	}
}

func testReport() *Report { return New(testPlan(), testMeta()) }
