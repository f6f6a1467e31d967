package providers

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Billing is what a cloud's registration (RegInfo.Billing) tells the bill
// reader (pkg/billing) and the FOCUS writer (analyze -o focus) about its
// bills: the names its FOCUS exports give it, the form of its resource ids,
// and the data warehouse its exports are read from. These facts live in the
// adapter, so adding a cloud needs no edit under pkg/.
type Billing struct {
	// FOCUSName is the ProviderName the cloud's own FOCUS export writes
	// (e.g. "AWS"); -o focus writes it for the cloud's instances.
	FOCUSName string
	// FOCUSNames are other ProviderName (FOCUS 1.3: ServiceProviderName)
	// values that name the cloud, matched whole without regard to case.
	// FOCUSName and the cloud's registered name always match.
	FOCUSNames []string
	// FOCUSNameWords name the cloud when a ProviderName contains one of them,
	// without regard to case (e.g. "amazon" for "Amazon Web Services").
	FOCUSNameWords []string
	// NormalizeResourceID is the form of a resource id that the bill and the
	// fleet share (e.g. an ARN's instance id), given the id with spaces and
	// trailing slashes trimmed; nil keeps ids as they are.
	NormalizeResourceID func(id string) string
	// Warehouse is the data warehouse the adapter reads the cloud's FOCUS
	// export from with the aggregation pushed down; nil for none.
	Warehouse *Warehouse
}

// ErrBillingSource marks a --billing value that names no source this build
// reads, or one malformed for its scheme.
var ErrBillingSource = errors.New("bad billing source")

// Warehouse is an adapter's billing capability: a data warehouse holding
// the cloud's FOCUS export, which pkg/billing reads with one aggregate
// query of its own SQL (AggregateSQL) in the warehouse's dialect.
type Warehouse struct {
	// Scheme is the --billing URL scheme, e.g. "athena" for athena://….
	Scheme string
	// Form is a source's syntax, for help and errors, e.g.
	// athena://WORKGROUP/DATABASE.TABLE.
	Form string
	// Dialect is the SQL the warehouse speaks, one of pkg/billing's
	// dialects ("trino", "googlesql").
	Dialect string
	// Open parses a source of Scheme (a malformed one is an error wrapping
	// ErrBillingSource) and connects to the warehouse with the cloud's
	// default credentials.
	Open func(ctx context.Context, source string) (WarehouseTable, error)
}

// WarehouseTable is one FOCUS export table in a warehouse, ready to query.
type WarehouseTable interface {
	// Table names the table as a query does: DATABASE.TABLE or
	// PROJECT.DATASET.TABLE.
	Table() string
	// Query runs one query and returns its column names, and next, which
	// returns its rows in order and io.EOF after the last. A cell is text:
	// "" for NULL, decimals exact, timestamps in RFC 3339.
	Query(ctx context.Context, sql string) (columns []string, next func() ([]string, error), err error)
	// Close releases the connection.
	Close() error
}

// BillingOf is a registered cloud's billing facts, nil for none.
func BillingOf(p fleet.Provider) *Billing {
	if ri, ok := Find(p); ok {
		return ri.Billing
	}
	return nil
}

// FOCUSName is the FOCUS ProviderName of a cloud: its registered
// Billing.FOCUSName, else the cloud's own name.
func FOCUSName(p fleet.Provider) string {
	if b := BillingOf(p); b != nil && b.FOCUSName != "" {
		return b.FOCUSName
	}
	return string(p)
}

// ProviderOfFOCUS is the registered cloud a FOCUS ProviderName (or 1.3
// ServiceProviderName) names: its registered name, Billing.FOCUSName or
// one of Billing.FOCUSNames, else one containing one of
// Billing.FOCUSNameWords.
func ProviderOfFOCUS(name string) (fleet.Provider, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return "", false
	}
	regMu.RLock()
	defer regMu.RUnlock()
	names := make([]fleet.Provider, 0, len(registry))
	for p := range registry {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	for _, p := range names {
		if n == strings.ToLower(string(p)) {
			return p, true
		}
		b := registry[p].Billing
		if b == nil {
			continue
		}
		if n == strings.ToLower(b.FOCUSName) {
			return p, true
		}
		for _, s := range b.FOCUSNames {
			if n == strings.ToLower(s) {
				return p, true
			}
		}
	}
	for _, p := range names {
		if b := registry[p].Billing; b != nil {
			for _, w := range b.FOCUSNameWords {
				if w != "" && strings.Contains(n, strings.ToLower(w)) {
					return p, true
				}
			}
		}
	}
	return "", false
}

// Warehouses are the registered clouds' warehouses, in the clouds' order.
func Warehouses() []*Warehouse {
	var out []*Warehouse
	for _, p := range Names() {
		if b := BillingOf(p); b != nil && b.Warehouse != nil {
			out = append(out, b.Warehouse)
		}
	}
	return out
}
