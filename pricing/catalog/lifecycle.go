package catalog

import (
	"fmt"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// Lifecycle statuses in lifecycle.csv.
const (
	statusRetired  = "retired"
	statusRetiring = "retiring"
	statusPromo    = "promo"
)

// lifeRule is one row of lifecycle.csv: the types a rule marks retired,
// retiring or promotional, by exact name, family ("family:NC") or name
// suffix ("suffix:_Promo").
type lifeRule struct {
	line     int
	provider fleet.Provider
	match    string
	status   string
	reason   string
	matched  int
}

func (ru *lifeRule) applies(t pricing.InstanceType) bool {
	if ru.provider != t.Provider {
		return false
	}
	if fam, ok := strings.CutPrefix(ru.match, "family:"); ok {
		return strings.EqualFold(fam, t.Family)
	}
	if suf, ok := strings.CutPrefix(ru.match, "suffix:"); ok {
		return strings.HasSuffix(strings.ToLower(t.Name), strings.ToLower(suf))
	}
	return strings.EqualFold(ru.match, t.Name)
}

func (l *loader) loadLifecycle() error {
	t, err := readTable(l.fsys, fileLifecycle, "provider", "match", "status", "reason")
	if err != nil {
		return err
	}
	l.superseded = map[string]int{}
	for _, r := range t.rows {
		ru := &lifeRule{
			line: r.line, provider: fleet.Provider(t.get(r, "provider")), match: t.get(r, "match"),
			status: t.get(r, "status"), reason: t.get(r, "reason"),
		}
		if !ru.provider.Valid() {
			return t.errorf(r, "provider %q is not one of aws, azure, gcp", ru.provider)
		}
		if ru.match == "" || ru.reason == "" {
			return t.errorf(r, "match and reason are required")
		}
		switch ru.status {
		case statusRetired, statusRetiring, statusPromo:
		default:
			return t.errorf(r, "status %q is not retired, retiring or promo", ru.status)
		}
		l.lifecycle = append(l.lifecycle, ru)
	}
	return nil
}

// applyLifecycle marks a type as the lifecycle rules say; a promotional
// size of a retired series is both.
func (l *loader) applyLifecycle(t *pricing.InstanceType) {
	for _, ru := range l.lifecycle {
		if !ru.applies(*t) {
			continue
		}
		ru.matched++
		switch ru.status {
		case statusPromo:
			t.Promo = ru.reason
		case statusRetiring:
			if t.Retired == "" {
				t.Retired = "retiring: " + ru.reason
			}
		default:
			t.Retired = "retired: " + ru.reason
		}
	}
}

// staleLifecycle reports a lifecycle rule that marks no type: a refresh
// that dropped a series must drop its rule too.
func (l *loader) staleLifecycle() error {
	for _, ru := range l.lifecycle {
		if ru.matched == 0 {
			return fmt.Errorf("%s:%d: lifecycle rule %s %s matches no type (stale?)", fileLifecycle, ru.line, ru.provider, ru.match)
		}
	}
	return nil
}
