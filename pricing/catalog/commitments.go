package catalog

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The commitment price files, copied unchanged from the shared data set
// (data/SOURCES.md names each one's source repository, path and commit).
var commitmentFiles = []string{
	"commit-aws_reserved_instances_gpu.csv",
	"commit-aws_capacity_blocks.csv",
	"commit-azure_reservations_gpu.csv",
	"commit-gcp_cud_gpu_machine_types.csv",
}

// commitKey indexes commitment rates.
type commitKey struct {
	offer   offerKey
	kind    pricing.CommitmentKind
	term    string
	payment string
}

// paymentOrder is the payment option answered when a query names none.
var paymentOrder = []string{pricing.PayNoUpfront, pricing.PayUpfrontOrMonthly, pricing.PayMonthly, pricing.PayPartialUpfront, pricing.PayAllUpfront, ""}

// approximations: offline, a Savings Plan is priced at the Reserved Instance
// of the same term and payment option whose flexibility it shares.
var approximations = map[pricing.CommitmentKind]pricing.CommitmentKind{
	pricing.EC2InstanceSavingsPlan: pricing.StandardRI,
	pricing.ComputeSavingsPlan:     pricing.ConvertibleRI,
}

// CommitmentRate returns the embedded rate for q. A Savings Plan kind is
// answered with the matching Reserved Instance rate, labelled as that
// approximation; no rate is ever derived from an assumed percentage.
func (c *catalog) CommitmentRate(q pricing.CommitmentQuery) (pricing.CommitmentRate, bool) {
	kind := q.Kind
	stand, approx := approximations[kind]
	if approx {
		kind = stand
	}
	ok := offerKeyOf(q.Provider, q.Region, q.InstanceType)
	var r pricing.CommitmentRate
	found := false
	if q.Payment != "" {
		r, found = c.commitments[commitKey{ok, kind, q.Term, q.Payment}]
	} else {
		for _, p := range paymentOrder {
			if r, found = c.commitments[commitKey{ok, kind, q.Term, p}]; found {
				break
			}
		}
	}
	if !found {
		return pricing.CommitmentRate{}, false
	}
	if approx {
		r.Approximation = fmt.Sprintf("no published %s rate offline: the %s rate of the same term and payment option stands in (AWS prices them alike)", q.Kind.Label(), kind.Label())
		r.Kind = q.Kind
	}
	return r, true
}

// loadCommitments reads the commitment price files.
func (l *loader) loadCommitments() error {
	l.c.commitments = map[commitKey]pricing.CommitmentRate{}
	for _, file := range commitmentFiles {
		src, err := l.source(file)
		if err != nil {
			return err
		}
		if err := l.readCommitments(file, src); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) readCommitments(file string, src sourceEntry) error {
	b, err := fs.ReadFile(l.fsys, file)
	if err != nil {
		return err
	}
	r := csv.NewReader(bytes.NewReader(b))
	head, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	cols := map[string]int{}
	for i, h := range head {
		cols[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"provider", "region", "instance_type_or_sku", "term", "payment_option", "hourly_usd",
		"on_demand_hourly_usd_if_present", "commitment_type", "source_commit", "source_date"} {
		if _, ok := cols[need]; !ok {
			return fmt.Errorf("%s: no %q column", file, need)
		}
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		line, _ := r.FieldPos(0)
		get := func(c string) string { return strings.TrimSpace(rec[cols[c]]) }
		where := fmt.Sprintf("%s:%d", file, line)
		p := fleet.Provider(get("provider"))
		if !p.Valid() {
			return fmt.Errorf("%s: provider %q is not aws, azure or gcp", where, get("provider"))
		}
		if get("region") == "" || get("instance_type_or_sku") == "" {
			return fmt.Errorf("%s: region and instance_type_or_sku must be set", where)
		}
		kind, err := commitmentKind(get("commitment_type"))
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		term := strings.ReplaceAll(get("term"), "_", "-")
		if term != "1y" && term != "3y" && term != "5y" && term != "capacity-block" {
			return fmt.Errorf("%s: term %q is not 1y, 3y, 5y or capacity_block", where, get("term"))
		}
		payment, err := paymentOption(get("payment_option"))
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		hourly, err := positiveUSD(get("hourly_usd"))
		if err != nil {
			return fmt.Errorf("%s: hourly_usd: %w", where, err)
		}
		rate := pricing.CommitmentRate{
			Provider: p, Region: get("region"), InstanceType: get("instance_type_or_sku"), Kind: kind,
			Term: term, Payment: payment, Hourly: hourly, Source: src.label(),
			Origin: fmt.Sprintf("%s (%s)", where, src.origin()),
			AsOf:   dateOf(get("source_date")),
		}
		if v := get("on_demand_hourly_usd_if_present"); v != "" {
			od, err := positiveUSD(v)
			if err != nil {
				return fmt.Errorf("%s: on_demand_hourly_usd_if_present: %w", where, err)
			}
			if hourly.GreaterThan(od) || hourly.LessThan(od.Div(decimal.NewFromInt(100))) {
				return fmt.Errorf("%s: commitment rate %s is not between 1 %% and 100 %% of the on-demand %s", where, hourly, od)
			}
			rate.OnDemandHourly = od
			rate.DiscountPercent = pricing.DiscountPercent(hourly, od)
		}
		k := commitKey{offerKeyOf(p, rate.Region, rate.InstanceType), kind, term, payment}
		if _, dup := l.c.commitments[k]; dup {
			return fmt.Errorf("%s: a second %s %s %s rate for %s in %s", where, kind, term, payment, rate.InstanceType, rate.Region)
		}
		l.c.commitments[k] = rate
	}
}

func commitmentKind(s string) (pricing.CommitmentKind, error) {
	switch {
	case strings.HasPrefix(s, "reserved_instance_standard"):
		return pricing.StandardRI, nil
	case strings.HasPrefix(s, "reserved_instance_convertible"):
		return pricing.ConvertibleRI, nil
	case s == "ec2_capacity_block_for_ml":
		return pricing.CapacityBlock, nil
	case s == "reserved_vm_instance_linux":
		return pricing.Reservation, nil
	case s == "resource_based_cud":
		return pricing.ResourceCUD, nil
	}
	return "", fmt.Errorf("commitment_type %q is not a known commitment", s)
}

func paymentOption(s string) (string, error) {
	switch {
	case s == "no_upfront":
		return pricing.PayNoUpfront, nil
	case s == "partial_upfront":
		return pricing.PayPartialUpfront, nil
	case s == "all_upfront", s == "upfront_at_purchase":
		return pricing.PayAllUpfront, nil
	case strings.HasPrefix(s, "reservation (upfront or monthly"):
		return pricing.PayUpfrontOrMonthly, nil
	case s == "monthly_billed_commitment":
		return pricing.PayMonthly, nil
	}
	return "", fmt.Errorf("payment_option %q is not known", s)
}

func positiveUSD(s string) (decimal.Decimal, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 1e6 {
		return decimal.Zero, fmt.Errorf("%q is not a price in (0, 1e6] USD", s)
	}
	return decimal.NewFromString(s)
}

// dateOf keeps the YYYY-MM-DD of a source date like "2025-11-30T13:30:58+00:00".
func dateOf(s string) string {
	if len(s) >= 10 {
		return s[:10]
	}
	return s
}
