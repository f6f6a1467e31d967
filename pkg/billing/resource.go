package billing

import (
	"strings"
	"unicode"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// ProviderOf maps a FOCUS ProviderName (or 1.3 ServiceProviderName) to the
// fleet's provider: AWS, Microsoft and Google by their usual spellings;
// any other provider is its name in lower case.
func ProviderOf(name string) fleet.Provider {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case n == "aws" || strings.Contains(n, "amazon"):
		return fleet.AWS
	case strings.Contains(n, "microsoft") || strings.Contains(n, "azure"):
		return fleet.Azure
	case strings.Contains(n, "google") || n == "gcp":
		return fleet.GCP
	}
	return fleet.Provider(n)
}

// NormalizeID is the form of a resource id that the bill and the fleet
// share: an EC2 ARN becomes its instance id, an Azure resource id is lower
// case, and a GCP self-link or full resource name becomes
// projects/P/zones/Z/instances/NAME.
func NormalizeID(p fleet.Provider, id string) string {
	return trim(normalize(p, trim(id)))
}

// trim drops spaces around an id and slashes at its end.
func trim(id string) string {
	return strings.TrimLeftFunc(strings.TrimRightFunc(id, func(r rune) bool { return r == '/' || unicode.IsSpace(r) }), unicode.IsSpace)
}

func normalize(p fleet.Provider, id string) string {
	switch p {
	case fleet.AWS:
		if strings.HasPrefix(id, "arn:") {
			parts := strings.SplitN(id, ":", 6)
			if len(parts) == 6 {
				res := parts[5]
				if i := strings.LastIndexAny(res, "/:"); i >= 0 {
					res = res[i+1:]
				}
				return res
			}
		}
		return id
	case fleet.Azure:
		return strings.ToLower(id)
	case fleet.GCP:
		if i := strings.Index(id, "projects/"); i >= 0 && strings.Contains(id[:i], "googleapis.com") {
			id = id[i:]
		}
		return id
	}
	return id
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
