package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/suggest"
	"github.com/gpufinops/gpufinops/providers"
)

// knownRegions are the regions a cloud's adapter knows
// (providers.RegInfo.Regions); nil when it knows none, which accepts every
// region.
func knownRegions(cloud string) []string {
	if ri, ok := providers.Find(fleet.Provider(cloud)); ok {
		return ri.Regions
	}
	return nil
}

// regionOf returns the name region has in the list (the same name in any
// case) and whether it is there.
func regionOf(region string, list []string) (string, bool) {
	for _, r := range list {
		if strings.EqualFold(r, region) {
			return r, true
		}
	}
	return "", false
}

// RegionsFor returns the --region values that belong to cloud, in the
// cloud's spelling: those its adapter knows, or every one when the adapter
// knows no region list. In a scan of several clouds each region goes only
// to the cloud it belongs to. Empty when --region is not given.
func (f *FleetFlags) RegionsFor(cloud string) []string {
	known := knownRegions(cloud)
	var out []string
	for _, r := range f.Regions {
		if known == nil {
			out = append(out, r)
			continue
		}
		if name, ok := regionOf(r, known); ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// validateRegions checks --region against the regions of the clouds
// --provider names: a region none of them knows is an error naming the
// nearest ones, or the cloud it belongs to; a cloud given none of the
// regions is an error too, as scanning every one of its regions is not
// what a run naming regions asked for.
func (f *FleetFlags) validateRegions() error {
	if len(f.Regions) == 0 {
		return nil
	}
	anyList := false
	for _, p := range f.Providers {
		if knownRegions(p) == nil {
			return nil // a cloud that knows no list takes every region
		}
		anyList = true
	}
	if !anyList {
		return nil
	}
	for _, r := range f.Regions {
		if strings.TrimSpace(r) == "" {
			return FlagErrorf("--region: an empty region name")
		}
		owned := slices.ContainsFunc(f.Providers, func(p string) bool { _, ok := regionOf(r, knownRegions(p)); return ok })
		if owned {
			continue
		}
		for _, c := range providers.Scannable() {
			if _, ok := regionOf(r, knownRegions(c)); ok {
				return FlagErrorf("--region: %q is a region of %s, which --provider does not name", r, c)
			}
		}
		var candidates []string
		for _, p := range f.Providers {
			candidates = append(candidates, knownRegions(p)...)
		}
		hint := suggest.Phrase(r, candidates, suggest.Quoted)
		if hint == "" {
			key := "providers.<cloud>.regions"
			if len(f.Providers) == 1 {
				key = "providers." + f.Providers[0] + ".regions"
			}
			hint = fmt.Sprintf(" (e.g. %s); a region newer than this build can be set in the configuration (%s)", examples(f.Providers), key)
		}
		return FlagErrorf("--region: %q is not a region of %s%s", r, strings.Join(f.Providers, " or "), hint)
	}
	if len(f.Providers) > 1 {
		for _, p := range f.Providers {
			if len(f.RegionsFor(p)) == 0 {
				return FlagErrorf("--region names no %s region (e.g. %s): give one, or leave %s out of --provider", p, examples([]string{p}), p)
			}
		}
	}
	return nil
}

// examples names the first region each cloud knows (its best known).
func examples(clouds []string) string {
	var out []string
	for _, c := range clouds {
		if k := knownRegions(c); len(k) > 0 {
			out = append(out, k[0])
		}
	}
	return strings.Join(out, ", ")
}
