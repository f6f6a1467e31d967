package report

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/sharing"
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

// testPlan is a hand-built plan: seven instances (one unpriced), every kind,
// recommendations chained on three instances, two warnings, and the
// governance, sharing and commitment parts. Its figures are worked out by hand
// (hourly × hours, rounded to cents; shares and unit costs to their decimals).
func testPlan() recommend.Plan {
	g5 := price(fleet.AWS, "us-east-1", "g5.12xlarge", pricing.OnDemand, "5.672")
	a2 := price(fleet.GCP, "us-central1", "a2-highgpu-8g", pricing.OnDemand, "29.3879")
	a2spot := price(fleet.GCP, "us-central1", "a2-highgpu-8g", pricing.Spot, "8.8164")
	a2spot.Zone = "us-central1-b"
	nc24 := price(fleet.Azure, "eastus", "Standard_NC24ads_A100_v4", pricing.OnDemand, "3.673")
	nc8 := price(fleet.Azure, "eastus", "Standard_NC8as_T4_v3", pricing.OnDemand, "0.752")
	nc4 := price(fleet.Azure, "westeurope", "Standard_NC4as_T4_v3", pricing.OnDemand, "0.526")
	a2small := price(fleet.GCP, "us-central1", "a2-highgpu-1g", pricing.OnDemand, "3.67339")
	g2 := price(fleet.GCP, "us-central1", "g2-standard-8", pricing.OnDemand, "0.85362")

	recs := []recommend.Recommendation{
		{
			ID: "schedule-gpu-train-01", ResourceID: "gpu-train-01", Provider: fleet.GCP, Account: "ml-prod",
			Region: "us-central1", InstanceType: "a2-highgpu-8g", Kind: recommend.KindSchedule,
			Action: "Run on a schedule", Target: "Mon–Fri 07:00–19:00 UTC", ShortAction: "schedule Mon–Fri 07–19",
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
			Action: "Move to spot", Target: "spot", ShortAction: "spot $1.234/h, ckpt 20 min",
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
			Action: "Move to a smaller GPU", Target: "Standard_NC8as_T4_v3", ShortAction: "→ Standard_NC8as_T4_v3",
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
			Action: "Buy a 1-year reservation", Target: "1y reserved", ShortAction: "1y reservation $2.10/h, 1×Standard_NC24ads_A100_v4",
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
		{
			ID: "quantize-infer-a100-02", ResourceID: "infer-a100-02", Provider: fleet.GCP, Account: "ml-prod",
			Region: "us-central1", InstanceType: "a2-highgpu-1g", Kind: recommend.KindQuantize,
			Action: "Serve llama-3.1-8b-instruct at INT8 on an L4", Target: "g2-standard-8",
			CurrentMonthly: dec("2681.57"), ProjectedMonthly: dec("623.14"), MonthlySavings: dec("2058.43"),
			Confidence: recommend.Medium, Risk: recommend.Medium,
			RiskNotes: []string{"INT8 can shift outputs slightly: check quality on your evaluation set first."},
			Rationale: "At INT8 the weights and KV cache fit an L4's 24 GiB, and 400 tokens/s stays within 70 % of its throughput.",
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"gpuUtilP95": 31, "tokensPerSecond": 400},
				Thresholds:  map[string]float64{"quantize.targetUtilPercent": 70, "quantize.minSavingsPercent": 10},
				Prices:      []pricing.Price{a2small, g2},
				HoursBefore: 730, HoursAfter: 730,
				Formula: "0.85362 USD/h × 730 h = 623.14 USD",
			},
		},
		{
			ID: "share-nb-t4-2", ResourceID: "nb-t4-2", Provider: fleet.Azure, Account: "0000-1111",
			Region: "westeurope", InstanceType: "Standard_NC4as_T4_v3", Kind: recommend.KindShare,
			Action: "Share nb-t4-1's GPU by time-slicing (2 per GPU) and stop this one", Target: "share nb-t4-1",
			CurrentMonthly: dec("114.14"), ProjectedMonthly: dec("0"), MonthlySavings: dec("114.14"),
			Confidence: recommend.High, Risk: recommend.Medium,
			RiskNotes: []string{"Time-slicing isolates neither memory nor faults."},
			Rationale: "Its GPU is busy at most 9 % (p95) and its memory peak fits beside nb-t4-1's on one T4.",
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"gpuUtilP95": 9, "replicasPerGpu": 2},
				Thresholds:  map[string]float64{"developmentMaxGpuPercent": 40, "targetGpuPercent": 80},
				Prices:      []pricing.Price{nc4},
				HoursBefore: 217, HoursAfter: 0,
				Formula: "saving = this instance's monthly cost: 0.526 USD/h × 217 h = 114.14 USD",
			},
		},
		{
			ID: "commitment-infer-a100-02", ResourceID: "infer-a100-02", Provider: fleet.GCP, Account: "ml-prod",
			Region: "us-central1", InstanceType: "a2-highgpu-1g", Kind: recommend.KindCommitment,
			Action: "Cover it with a 1-year committed use discount", Target: "1-year committed use discount", ShortAction: "1y CUD $0.445/h, 1×g2-standard-8",
			CurrentMonthly: dec("623.14"), ProjectedMonthly: dec("392.58"), MonthlySavings: dec("230.56"),
			Confidence: recommend.High, Risk: recommend.Low,
			RiskNotes: []string{"A commitment is paid whether or not the capacity is used."},
			Rationale: "The g2-standard family in us-central1 runs $0.854/h of on-demand usage in every hour.",
			Evidence: recommend.Evidence{
				Metrics:     map[string]float64{"groupCommitHourly": 0.85362, "bandSharePercent": 100},
				Thresholds:  map[string]float64{"discount": 0.37},
				Prices:      []pricing.Price{g2},
				HoursBefore: 730, HoursAfter: 730,
				Formula: "623.14 USD × (1 − 0.37) = 392.58 USD",
			},
			After: "quantize-infer-a100-02",
		},
		{
			ID: "tagging-nb-t4-1", ResourceID: "nb-t4-1", Provider: fleet.Azure, Account: "0000-1111",
			Region: "westeurope", InstanceType: "Standard_NC4as_T4_v3", Kind: recommend.KindTagging,
			Action: "Add tag CostCenter: $114.14/month is unattributed", Target: "tags",
			CurrentMonthly: dec("114.14"), ProjectedMonthly: dec("114.14"), MonthlySavings: dec("0"),
			Confidence: recommend.High, Risk: recommend.Low,
			Rationale: "Untagged GPU spend cannot be shown back to a team or project: CostCenter is missing.",
			Evidence: recommend.Evidence{
				Prices:      []pricing.Price{nc4},
				HoursBefore: 217, HoursAfter: 217,
				Formula: "no saving of its own: tagging makes the spend attributable",
			},
		},
	}

	inst := func(id string, p fleet.Provider, acct, region, typ, gpu string, n float64, pr *pricing.Price, cur, opt, sav string) recommend.InstanceCost {
		hours := 730.0
		if typ == "Standard_NC4as_T4_v3" {
			hours = 217 // office hours
		}
		ic := recommend.InstanceCost{
			ResourceID: id, Provider: p, Account: acct, Region: region, InstanceType: typ, GPUModel: gpu, GPUCount: n,
			Lifecycle: fleet.OnDemand, State: fleet.Running, MonthlyHours: hours, Hourly: pr, Priced: pr != nil,
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
		inst("nb-t4-1", fleet.Azure, "0000-1111", "westeurope", "Standard_NC4as_T4_v3", "T4", 1, &nc4, "114.14", "114.14", "0"),
		inst("nb-t4-2", fleet.Azure, "0000-1111", "westeurope", "Standard_NC4as_T4_v3", "T4", 1, &nc4, "114.14", "0", "114.14"),
		inst("infer-a100-02", fleet.GCP, "ml-prod", "us-central1", "a2-highgpu-1g", "A100", 1, &a2small, "2681.57", "392.58", "2288.99"),
	}
	// p95 GPU utilization: every histogram bucket edge is met once (9.99
	// in 0–10, 100 in 90–100); the unpriced H200 has no GPU data.
	for i, p95 := range []float64{2, 41, 18, -1, 10, 9.99, 100} {
		if p95 >= 0 {
			instances[i].GPUUtilP95 = &p95
		}
	}

	return recommend.Plan{
		Instances:       instances,
		Recommendations: recs,
		Warnings: []recommend.Warning{
			{ResourceID: "i-0ffff0000aaaa0002", Code: recommend.WarnUnpriced, Message: "No on-demand price for p5e.48xlarge in ap-southeast-3; left out of the costs."},
			{ResourceID: "gpu-train-01", Code: recommend.WarnNoCheckpointing, Message: "Spot advice assumes the job resumes from its checkpoints."},
		},
		Summary: recommend.Summary{
			CurrentMonthly:   dec("31184.87"),
			OptimizedMonthly: dec("3614.26"),
			MonthlySavings:   dec("27570.61"),
			SavingsPercent:   dec("88.4"),
			InstanceCount:    7,
			GPUCount:         24,
			UnpricedCount:    1,
			SavingsByKind: map[recommend.Kind]decimal.Decimal{
				recommend.KindIdleStop:   dec("4140.56"),
				recommend.KindSchedule:   dec("12284.15"),
				recommend.KindRightsize:  dec("2132.33"),
				recommend.KindQuantize:   dec("2058.43"),
				recommend.KindShare:      dec("114.14"),
				recommend.KindSpot:       dec("6418.30"),
				recommend.KindCommitment: dec("422.70"),
				recommend.KindTagging:    dec("0"),
			},
		},
		Policy:      testPolicy(),
		Governance:  testGovernance(),
		Sharing:     testSharing(),
		Commitments: testCommitments(),
	}
}

func gmoney(s string) governance.Money       { return governance.NewMoney(dec(s)) }
func gmoneyPtr(s string) *governance.Money   { m := gmoney(s); return &m }
func unitCost(s string) *governance.UnitCost { u := governance.NewUnitCost(dec(s)); return &u }
func fptr(f float64) *float64                { return &f }

// testGovernance is the audit, allocation and metrics of the seven
// instances under testPolicy's tag policy. Tags (not in the plan): the Azure
// A100 spells its key "team"; the H200 has no Team; nb-t4-1 has no CostCenter;
// nb-t4-2's Environment is "dev".
func testGovernance() governance.Report {
	bucket := func(key string, n int, cur, opt string, share float64) governance.Bucket {
		return governance.Bucket{Key: key, Instances: n, MonthlyCost: gmoney(cur), OptimizedMonthlyCost: gmoney(opt), SharePercent: share}
	}
	im := func(id, model string, gpus, hours float64, cost string, util *float64, busy, eff float64, perGPU, perBusy string) governance.InstanceMetrics {
		m := governance.InstanceMetrics{ResourceID: id, Model: model, GPUCount: gpus, MonthlyHours: hours, PaidGPUHours: gpus * hours}
		if cost != "" {
			m.Priced, m.MonthlyCost, m.CostPerGPUHour = true, gmoney(cost), gmoneyPtr(perGPU)
		}
		if util != nil {
			m.GPUUtilAvg, m.BusyGPUHours, m.EfficiencyPercent = util, fptr(busy), fptr(eff)
			if cost != "" {
				m.CostPerBusyGPUHour = gmoneyPtr(perBusy)
			}
		}
		return m
	}
	instances := []governance.InstanceMetrics{
		im("i-0a1b2c3d4e5f60001", "", 4, 730, "4140.56", fptr(1.5), 43.8, 1.5, "1.42", "94.53"),
		im("gpu-train-01", "llama-3.1-70b", 8, 730, "21453.17", fptr(30), 1752, 30, "3.67", "12.24"),
		im(azureVM, "llama-3.1-8b-instruct", 1, 730, "2681.29", fptr(12), 87.6, 12, "3.67", "30.61"),
		im("i-0ffff0000aaaa0002", "llama-3.1-405b", 8, 730, "", nil, 0, 0, "", ""),
		im("nb-t4-1", "", 1, 217, "114.14", fptr(5), 10.85, 5, "0.53", "10.52"),
		im("nb-t4-2", "", 1, 217, "114.14", fptr(4), 8.68, 4, "0.53", "13.15"),
		im("infer-a100-02", "llama-3.1-8b-instruct", 1, 730, "2681.57", fptr(25), 182.5, 25, "3.67", "14.69"),
	}
	instances[1].TrainingRun = "llm-pretrain-7"
	instances[3].TrainingRun = "h200-eval-run"
	az, inf := &instances[2], &instances[6]
	az.TokensPerSecond, az.MonthlyOutputTokens, az.CostPerMillionTokens = fptr(250), fptr(657000000), unitCost("4.0811")
	az.RequestsPerSecond, az.MonthlyRequests, az.CostPerThousandRequests = fptr(2), fptr(5256000), unitCost("0.5101")
	inf.TokensPerSecond, inf.MonthlyOutputTokens, inf.CostPerMillionTokens = fptr(400), fptr(1051200000), unitCost("2.5510")

	return governance.Report{
		Audit: governance.Audit{
			Policy:                       testPolicy().Governance,
			InstanceCount:                7,
			CompliantCount:               4,
			UnpricedCount:                1,
			MonthlyCost:                  gmoney("31184.87"),
			NonCompliantMonthlyCost:      gmoney("228.28"),
			CompliancePercentByInstances: 57.1,
			CompliancePercentBySpend:     99.3,
			Tags: []governance.TagSummary{
				{Tag: "Team", Required: true, Missing: 1, CaseMismatch: 1, MonthlyCost: gmoney("0")},
				{Tag: "Project", Required: true, MonthlyCost: gmoney("0")},
				{Tag: "Environment", Required: true, Invalid: 1, MonthlyCost: gmoney("114.14")},
				{Tag: "CostCenter", Required: true, Missing: 1, MonthlyCost: gmoney("114.14")},
			},
			Violations: []governance.InstanceViolations{
				{ResourceID: azureVM, Provider: fleet.Azure, Account: "0000-1111", Region: "eastus", InstanceType: "Standard_NC24ads_A100_v4",
					MonthlyCost: gmoney("2681.29"), Priced: true, Compliant: true, CaseMismatch: []string{"Team"},
					Violations: []governance.Violation{{Kind: governance.KindCaseMismatch, Tag: "Team", Key: "team", Value: "serving",
						Message: `key "team" is spelt differently from "Team"; cost reports list the two apart`}},
					Action: "Rename tag team to Team: AWS and Azure cost reports list each spelling apart"},
				{ResourceID: "nb-t4-1", Provider: fleet.Azure, Account: "0000-1111", Region: "westeurope", InstanceType: "Standard_NC4as_T4_v3",
					MonthlyCost: gmoney("114.14"), Priced: true, Missing: []string{"CostCenter"},
					Violations: []governance.Violation{{Kind: governance.KindMissing, Tag: "CostCenter", Message: "CostCenter is missing"}},
					Action:     "Add tag CostCenter: $114.14/month is unattributed"},
				{ResourceID: "nb-t4-2", Provider: fleet.Azure, Account: "0000-1111", Region: "westeurope", InstanceType: "Standard_NC4as_T4_v3",
					MonthlyCost: gmoney("114.14"), Priced: true, Invalid: []string{"Environment"},
					Violations: []governance.Violation{{Kind: governance.KindInvalidValue, Tag: "Environment", Key: "Environment", Value: "dev",
						Allowed: []string{"Production", "Staging", "Development"}, Suggestion: "Development",
						Message: `Environment "dev" is not one of Production, Staging, Development (did you mean Development?)`}},
					Action: `Set Environment to Development (not "dev"): $114.14/month carries incomplete tags`},
				{ResourceID: "i-0ffff0000aaaa0002", Provider: fleet.AWS, Account: "111122223333", Region: "ap-southeast-3", InstanceType: "p5e.48xlarge",
					Missing:    []string{"Team"},
					Violations: []governance.Violation{{Kind: governance.KindMissing, Tag: "Team", Message: "Team is missing"}},
					Action:     "Add tag Team: its cost is unknown (no price)"},
			},
		},
		Allocation: governance.Allocation{
			MonthlyCost:          gmoney("31184.87"),
			OptimizedMonthlyCost: gmoney("3614.26"),
			ByTeam: []governance.Bucket{
				bucket("research", 2, "25593.73", "2750.72", 82.1),
				bucket("serving", 2, "5362.86", "749.40", 17.2),
				bucket("data-science", 2, "228.28", "114.14", 0.7),
				bucket(governance.Untagged, 1, "0", "0", 0),
			},
			ByProject: []governance.Bucket{
				bucket("llm-pretrain", 1, "21453.17", "2750.72", 68.8),
				bucket("batch-eval", 1, "4140.56", "0", 13.3),
				bucket("search-api", 1, "2681.57", "392.58", 8.6),
				bucket("chat-api", 1, "2681.29", "356.82", 8.6),
				bucket("feature-store", 1, "114.14", "0", 0.4),
				bucket("notebooks", 1, "114.14", "114.14", 0.4),
				bucket("h200-eval", 1, "0", "0", 0),
			},
			ByWorkloadType: []governance.Bucket{
				bucket("Training", 1, "21453.17", "2750.72", 68.8),
				bucket("Inference", 2, "5362.86", "749.40", 17.2),
				bucket("Development", 3, "4368.84", "114.14", 14.0),
				bucket(governance.Untagged, 1, "0", "0", 0),
			},
			ByEnvironment: []governance.Bucket{
				bucket("Production", 3, "26816.03", "3500.12", 86.0),
				bucket("Development", 2, "4254.70", "114.14", 13.6),
				bucket("dev", 1, "114.14", "0", 0.4),
				bucket("Staging", 1, "0", "0", 0),
			},
			ByProvider: []governance.Bucket{
				bucket("gcp", 2, "24134.74", "3143.30", 77.4),
				bucket("aws", 2, "4140.56", "0", 13.3),
				bucket("azure", 3, "2909.57", "470.96", 9.3),
			},
		},
		Metrics: governance.Metrics{
			Fleet: governance.FleetMetrics{
				PaidGPUHours: 16494, MeasuredGPUHours: 10654, BusyGPUHours: 2085.43,
				EfficiencyPercent: fptr(19.6), CostPerBusyGPUHour: gmoneyPtr("14.95"),
				MonthlyOutputTokens: 1708200000, MonthlyRequests: 5256000,
				CostPerMillionTokens: unitCost("3.1395"), CostPerThousandRequests: unitCost("0.5101"),
			},
			Instances: instances,
			TrainingRuns: []governance.TrainingRun{
				{ID: "h200-eval-run", Instances: []string{"i-0ffff0000aaaa0002"}, GPUCount: 8, MonthlyCost: gmoney("0"),
					Priced: false, ExpectedHours: fptr(120)},
				{ID: "llm-pretrain-7", Instances: []string{"gpu-train-01"}, GPUCount: 8, MonthlyCost: gmoney("21453.17"),
					Priced: true, ExpectedHours: fptr(400), RunCost: gmoneyPtr("11755.16")},
			},
		},
	}
}

// testSharing: nb-t4-2's notebook moves onto nb-t4-1's T4.
func testSharing() sharing.Plan {
	pol := testPolicy().Sharing
	return sharing.Plan{
		Groups: []sharing.Group{{
			Mode: sharing.TimeSlicing, Provider: fleet.Azure, Region: "westeurope", Account: "0000-1111",
			InstanceType: "Standard_NC4as_T4_v3", GPUModel: "T4", GPUMemoryGiB: 16, Replicas: 2, Config: "nc4as-t4-v3-t4",
			Hosts:        []sharing.Host{{InstanceID: "nb-t4-1", Tenants: []string{"nb-t4-1", "nb-t4-2"}, GPULoadPercent: 17, GPUMemoryGiB: 7.5}},
			Freed:        []string{"nb-t4-2"},
			Moves:        []sharing.Move{{InstanceID: "nb-t4-2", Host: "nb-t4-1", MonthlyCost: dec("114.14")}},
			FreedMonthly: dec("114.14"),
		}},
		Notes:        []string{"time-slicing isolates neither memory nor faults"},
		FreedMonthly: dec("114.14"),
		Policy:       &pol,
	}
}

// testCommitments: the A100 VM (rightsized to a T4) and the quantized L4 run
// all month and are committed; the rest do not run steadily on demand. The
// planner prefers 3 years; the policy, and so the recommendations, 1 year.
func testCommitments() commitplan.Plan {
	// breakEven is 1 − d to four decimals, as the planner writes it.
	breakEven := func(d float64) float64 { return math.Round((1-d)*1e4) / 1e4 }
	none := func(p fleet.Provider, region, family string, total string, d1, d3 float64) commitplan.GroupPlan {
		term := func(t string, d float64) commitplan.TermPlan {
			return commitplan.TermPlan{Term: t, Discount: d, OnDemandMonthly: dec(total), TotalMonthly: dec(total),
				BaselineMonthly: dec(total), BreakEven: breakEven(d)}
		}
		return commitplan.GroupPlan{Provider: p, Region: region, Family: family, Items: []string{},
			Terms: []commitplan.TermPlan{term("1y", d1), term("3y", d3)}, Recommended: commitplan.None}
	}
	steady := func(p fleet.Provider, region, family, id, hourly, baseline string, d1, d3 float64, c1, s1, c3, s3 string) commitplan.GroupPlan {
		term := func(t string, d float64, committed, savings string) commitplan.TermPlan {
			return commitplan.TermPlan{Term: t, Discount: d, CommitHourly: dec(hourly), CommittedMonthly: dec(committed),
				TotalMonthly: dec(committed), BaselineMonthly: dec(baseline), SavingsMonthly: dec(savings),
				Utilization: 1, BreakEven: breakEven(d), ExceedShare: 1,
				Allocations: []commitplan.Allocation{{ID: id, BandShare: 1, SavingsMonthly: dec(savings)}}}
		}
		return commitplan.GroupPlan{Provider: p, Region: region, Family: family, Items: []string{id},
			Terms: []commitplan.TermPlan{term("1y", d1, c1, s1), term("3y", d3, c3, s3)}, Recommended: "3y"}
	}
	return commitplan.Plan{
		Hours: 168,
		Groups: []commitplan.GroupPlan{
			none(fleet.AWS, "us-east-1", "g5", "0", 0.35, 0.55),
			steady(fleet.Azure, "eastus", "NCasT4_v3", azureVM, "0.752", "548.96", 0.35, 0.55, "356.82", "192.14", "247.03", "301.93"),
			none(fleet.Azure, "westeurope", "NCasT4_v3", "114.14", 0.35, 0.55),
			none(fleet.GCP, "us-central1", "a2-highgpu", "2750.72", 0.37, 0.55),
			steady(fleet.GCP, "us-central1", "g2-standard", "infer-a100-02", "0.85362", "623.14", 0.37, 0.55, "392.58", "230.56", "280.41", "342.73"),
		},
		SavingsMonthly: dec("644.66"),
		Assumptions:    []string{},
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
		Quantize: recommend.QuantizePolicy{TargetUtilPercent: 70, MinReplicas: 2, Context: 4096, Batch: 8, MinSavingsPercent: 10},
		Sharing: sharing.Policy{DevelopmentMaxGPUPercent: 40, InferenceMaxGPUPercent: 30, TargetGPUPercent: 80,
			HeadroomPercent: 10, MaxReplicas: 8, MIG: true},
		Governance: governance.Policy{
			RequiredTags:       []string{"Team", "Project", "Environment", "CostCenter"},
			AllowedValues:      []governance.AllowedValues{{Tag: "Environment", Values: []string{"Production", "Staging", "Development"}}},
			ModelNameWorkloads: []string{},
		},
		Spot: recommend.SpotPolicy{Workloads: []fleet.WorkloadType{fleet.Training, fleet.Batch}, MaxBandIndex: 2,
			CheckpointWriteGBps: 1, CheckpointBytesPerParam: 14, CheckpointMinutes: 5, RestartMinutes: 10, InterruptionsPerMonth: 1},
		Commitment: recommend.CommitmentPolicy{Term: "1y",
			Discounts1y: map[string]float64{"aws": 0.35, "azure": 0.35, "gcp": 0.37},
			Discounts3y: map[string]float64{"aws": 0.55, "azure": 0.55, "gcp": 0.55},
			Names:       map[string]string{"aws": "Compute Savings Plan", "azure": "reservation", "gcp": "committed use discount"}},
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
