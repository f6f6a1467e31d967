package fleet

import (
	"regexp"
	"strconv"
	"strings"
)

// Codes of scan warnings.
const (
	// ScanScopeFailed: a scope (an account, a region) could not be listed;
	// its instances are missing from the snapshot.
	ScanScopeFailed = "scope-failed"
	// ScanMetricsFailed: a metrics source could not be read for a scope; its
	// instances are in the snapshot with their utilization unknown.
	ScanMetricsFailed = "metrics-failed"
	// ScanUnknownType: neither the cloud's answer (or the fleet file) nor
	// the catalog describes or prices an instance type; its instances are in
	// the snapshot, without the facts Reason names (unpriced when the price
	// is missing, without savings advice either way).
	ScanUnknownType = "unknown-type"
	// ScanCommitmentsFailed: a commitment API (Source: reservations,
	// savings plans, committed use discounts) could not be read for a
	// scope; its instances are in the snapshot, but the commitments that
	// API lists are missing, so advice may count savings on capacity
	// already committed.
	ScanCommitmentsFailed = "commitments-failed"
)

// commitmentsMissing is what a ScanCommitmentsFailed warning means for the
// advice.
const commitmentsMissing = "the commitments it lists are missing, so the advice may count savings on capacity already committed"

// UtilizationUnknown is the utilization source reports give an instance whose
// metrics source failed.
const UtilizationUnknown = "unknown"

// ScanWarning is one part of a scan that failed: a scope that could not be
// listed, or a metrics source that could not be read, with the instances it
// left without utilization.
type ScanWarning struct {
	// Code is ScanScopeFailed, ScanMetricsFailed, ScanUnknownType or
	// ScanCommitmentsFailed; readers treat another code like ScanScopeFailed.
	Code string `json:"code"`
	// Provider, Account and Region name the scope, as far as it is known.
	Provider Provider `json:"provider,omitempty"`
	Account  string   `json:"account,omitempty"`
	Region   string   `json:"region,omitempty"`
	// Source is the metrics source that failed (cloudwatch, prometheus,
	// nvidia-smi) or the commitment API (ec2:DescribeReservedInstances).
	Source string `json:"source,omitempty"`
	// Reason is the error, on one line.
	Reason string `json:"reason"`
	// Instances are the IDs kept with their utilization unknown.
	Instances []string `json:"instances,omitempty"`
}

// Scope names what failed: "aws:123456789012/us-east-1", "aws:123456789012",
// or "prometheus" for a metrics source of the whole fleet.
func (w ScanWarning) Scope() string {
	var s string
	if w.Provider != "" {
		s = string(w.Provider)
		if w.Account != "" {
			s += ":" + w.Account
		}
		if w.Region != "" {
			s += "/" + w.Region
		}
	} else if w.Region != "" {
		s = w.Region
	}
	if s == "" {
		return w.Source
	}
	return s
}

// Message says what failed and what it means for the snapshot, in one line.
func (w ScanWarning) Message() string {
	w.Reason = strings.Join(strings.Fields(w.Reason), " ")
	scope := w.Scope()
	if w.Code == ScanUnknownType {
		if scope == "" {
			scope = "the fleet"
		}
		return scope + ": " + w.Reason + "; " + plural(len(w.Instances), "instance") +
			" kept, without savings advice"
	}
	if w.Code == ScanCommitmentsFailed {
		return w.commitmentsMessage(scope)
	}
	if scope == "" {
		if w.Code == ScanMetricsFailed {
			scope = "the fleet"
		} else {
			return "part of the scan failed: " + w.Reason + "; its instances are missing"
		}
	}
	if w.Code == ScanMetricsFailed {
		src := w.Source
		if src == "" {
			src = "metrics"
		}
		return src + " could not be read for " + scope + ": " + w.Reason + "; " +
			plural(len(w.Instances), "instance") + " kept with utilization unknown (no idle, schedule or rightsize advice)"
	}
	return scope + " was not scanned: " + w.Reason + "; its instances are missing"
}

// commitmentsMessage is Message for ScanCommitmentsFailed. The reason may
// already name the API and say what its failure means (a providers
// ScopeError's text does); neither is said twice.
func (w ScanWarning) commitmentsMessage(scope string) string {
	if scope == "" || scope == w.Source {
		scope = "the fleet"
	}
	api, reason := w.Source, w.Reason
	if api == "" {
		api = "a commitment API"
	} else {
		reason = strings.TrimPrefix(reason, api+": ")
	}
	if i := strings.Index(reason, "; the commitments it "); i >= 0 {
		reason = reason[:i]
	}
	return api + " could not be read for " + scope + ": " + reason + "; " + commitmentsMissing
}

// String is Message.
func (w ScanWarning) String() string { return w.Message() }

// UnknownUtilization maps each instance a metrics warning left without
// utilization to that warning.
func (m Metadata) UnknownUtilization() map[string]*ScanWarning {
	out := map[string]*ScanWarning{}
	for i := range m.Warnings {
		w := &m.Warnings[i]
		if w.Code != ScanMetricsFailed {
			continue
		}
		for _, id := range w.Instances {
			if _, ok := out[id]; !ok {
				out[id] = w
			}
		}
	}
	return out
}

var warningCode = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// scanWarning checks one metadata.warnings entry.
func (c *checker) scanWarning(p string, w ScanWarning) {
	if !warningCode.MatchString(w.Code) {
		c.failf(p+"code", "%q is not a warning code (lower-case words joined by -, e.g. %s)", w.Code, ScanScopeFailed)
	}
	if w.Provider != "" && !w.Provider.Valid() {
		c.failf(p+"provider", "%q is not one of aws, azure, gcp", w.Provider)
	}
	if strings.TrimSpace(w.Reason) == "" {
		c.failf(p+"reason", "missing")
	}
	for j, id := range w.Instances {
		if strings.TrimSpace(id) == "" {
			c.failf(p+"instances["+strconv.Itoa(j)+"]", "empty instance id")
		}
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
