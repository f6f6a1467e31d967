package billing

import (
	"strings"
	"unicode"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// ProviderOf maps a FOCUS ProviderName (or 1.3 ServiceProviderName) to the
// fleet's provider: the registered cloud whose billing facts name it
// (providers.Billing: FOCUSName, FOCUSNames, FOCUSNameWords); any other
// provider is its name in lower case.
func ProviderOf(name string) fleet.Provider {
	if p, ok := providers.ProviderOfFOCUS(name); ok {
		return p
	}
	return fleet.Provider(strings.ToLower(strings.TrimSpace(name)))
}

// NormalizeID is the form of a resource id that the bill and the fleet
// share, as the provider's registration gives it
// (providers.Billing.NormalizeResourceID: e.g. an ARN's instance id);
// spaces around it and slashes at its end are dropped.
func NormalizeID(p fleet.Provider, id string) string {
	id = trim(id)
	if b := providers.BillingOf(p); b != nil && b.NormalizeResourceID != nil {
		id = b.NormalizeResourceID(id)
	}
	return trim(id)
}

// trim drops spaces around an id and slashes at its end.
func trim(id string) string {
	return strings.TrimLeftFunc(strings.TrimRightFunc(id, func(r rune) bool { return r == '/' || unicode.IsSpace(r) }), unicode.IsSpace)
}

// Key is the join key of a resource: provider and normalised id.
func Key(p fleet.Provider, id string) string { return string(p) + "|" + NormalizeID(p, id) }

// shortName is the last path segment of a normalised id, the GCP instance
// name or the Azure VM name, for a fleet that holds ids in short form.
func shortName(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// tokens are the words of a charge description that may name an instance
// type ("$1.624 per On Demand Linux g5.4xlarge Instance Hour").
func tokens(desc string) []string {
	f := strings.Fields(desc)
	out := f[:0]
	for _, w := range f {
		w = strings.Trim(w, ",;:()[]\"'")
		if w != "" && !strings.HasPrefix(w, "$") {
			out = append(out, w)
		}
	}
	return out
}
