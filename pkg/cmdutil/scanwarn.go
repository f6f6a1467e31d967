package cmdutil

import (
	"errors"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// ScanFailure is one part of a scan that failed, as the snapshot and the
// report record it.
type ScanFailure struct {
	Warning fleet.ScanWarning
	// Recorded is set for a failure read from a snapshot's metadata, not
	// met by this run.
	Recorded bool
	// Err is the error this run met, when it met one.
	Err error
}

func (e *ScanFailure) Error() string { return e.Warning.Message() }
func (e *ScanFailure) Unwrap() error { return e.Err }

// ScanWarningOf describes a scan failure: a *providers.ScopeError keeps its
// scope, a metrics failure its source and the instances it left without
// utilization; any other error is a failed scope named only by its text.
func ScanWarningOf(err error) fleet.ScanWarning {
	var sf *ScanFailure
	if errors.As(err, &sf) {
		return sf.Warning
	}
	var se *providers.ScopeError
	if !errors.As(err, &se) {
		return fleet.ScanWarning{Code: fleet.ScanScopeFailed, Reason: oneLine(err.Error())}
	}
	w := fleet.ScanWarning{
		Code:     fleet.ScanScopeFailed,
		Provider: se.Scope.Provider,
		Account:  se.Scope.Account,
		Region:   se.Scope.Region,
	}
	// The reason is the whole error less the scope's name, so that what a
	// caller wrapped around it (e.g. a pointer to the IAM policy) stays.
	prefix := se.Scope.String() + ": "
	if se.Commitments {
		// The reason keeps the API's name: the warning's text (fleet's
		// Message) names no source for this code.
		w.Code, w.Source = providers.ScanCommitmentsFailed, se.Source
	}
	if se.Metrics {
		w.Code, w.Source = fleet.ScanMetricsFailed, se.Source
		w.Instances = append([]string(nil), se.Instances...)
		prefix += se.Source + ": "
	}
	msg := err.Error()
	if i := strings.Index(msg, prefix); i >= 0 {
		msg = msg[:i] + msg[i+len(prefix):]
	}
	w.Reason = oneLine(msg)
	return w
}

// addFailures records scan failures met by this run, in Failures and in the
// fleet's metadata.warnings.
func (in *FleetInputs) addFailures(errs ...error) {
	for _, err := range errs {
		w := ScanWarningOf(err)
		in.Fleet.Metadata.Warnings = append(in.Fleet.Metadata.Warnings, w)
		in.Failures = append(in.Failures, &ScanFailure{Warning: w, Err: err})
	}
}

// addUnknownTypes records the instance types neither the scan (or the fleet
// file) nor the catalog describes or prices, as failures: the run is
// partial (exit code 3) and the report and snapshot carry each warning. A
// warning the snapshot already records is not repeated.
func (in *FleetInputs) addUnknownTypes(ws []fleet.ScanWarning) {
	for _, w := range ws {
		if slices.ContainsFunc(in.Fleet.Metadata.Warnings, func(r fleet.ScanWarning) bool {
			return r.Code == w.Code && r.Provider == w.Provider && r.Region == w.Region && r.Reason == w.Reason
		}) {
			continue
		}
		in.Fleet.Metadata.Warnings = append(in.Fleet.Metadata.Warnings, w)
		in.Failures = append(in.Failures, &ScanFailure{Warning: w})
	}
}

// PricedElsewhere drops, from the unknown-type warnings whose only missing
// fact is the price, the instances priced another way (priced says which:
// those a bill gives a rate), and the warnings left without instances, from
// the failures and the fleet's metadata alike.
func (in *FleetInputs) PricedElsewhere(priced func(id string) bool) {
	in.Fleet.Metadata.Warnings = pricing.WithoutPriced(in.Fleet.Metadata.Warnings, priced)
	keep := in.Failures[:0]
	for _, f := range in.Failures {
		var sf *ScanFailure
		if errors.As(f, &sf) && sf.Warning.Code == fleet.ScanUnknownType {
			ws := pricing.WithoutPriced([]fleet.ScanWarning{sf.Warning}, priced)
			if len(ws) == 0 {
				continue
			}
			sf.Warning = ws[0]
		}
		keep = append(keep, f)
	}
	in.Failures = keep
}

// source names where the fleet came from in messages.
func (in *FleetInputs) source() string {
	if in.Fleet != nil && in.Fleet.Metadata.Name != "" {
		return "the snapshot " + in.Fleet.Metadata.Name
	}
	return "the snapshot"
}
