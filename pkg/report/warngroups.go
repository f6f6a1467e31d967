package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The terminal and markdown formats print warnings grouped: one line per
// code with its count and up to maxExamples examples, stale prices once per
// source. JSON and HTML keep every warning.

// maxExamples is how many resources a warning group names.
const maxExamples = 3

// warningGroup is the warnings of one code, or for stale prices of one
// source and date, in the order their first warning comes.
type warningGroup struct {
	code string
	n    int
	// message is the first warning's, less the example it names; for
	// stale prices the source's, with every instance counted.
	message  string
	examples []string
	// items are its first maxExamples warnings: a group no larger is
	// printed a warning a line.
	items []Warning
	// merged says the message stands for several stale-price warnings.
	merged bool
	// stale is a stale-price group's source, its instances summed over
	// rates; nil for other codes.
	stale *staleSource
	rates int
}

// stalePriceMessage reads back the message stalePriceWarnings writes, for
// reports written before 1.7.
var stalePriceMessage = regexp.MustCompile(`^(\w+) prices from (.+) as of (\S+) are (\d+) days old, over the (\d+)-day limit \(([^)]+)\); (\d+) instances? priced with them: (.*)$`)

// commitmentRate is a commitment price's source as the engine names it:
// one rate of a data set ("… rate $0.79223/h (AWS RIs via …, as of …)").
var commitmentRate = regexp.MustCompile(`^(.+?) rate \$[0-9.]+/h \((.+), as of \S+\)$`)

// staleSource is the price source a stale-price message names, one key for
// every rate of one data set, and what the message says of it; ok is false
// for a message of another shape.
type staleSource struct {
	kind, source, asOf, days, limit, key, advice string
	instances                                    int
}

// staleOf is the source a stale-price warning is about: from its
// stalePrice (since 1.7), else, for a report written by an older version,
// read back from its message.
func staleOf(wn Warning) (staleSource, bool) {
	if p := wn.StalePrice; p != nil {
		return staleSource{kind: p.Kind, source: p.Source, asOf: p.AsOf, days: strconv.Itoa(p.AgeDays),
			limit: strconv.Itoa(p.LimitDays), key: p.PolicyKey, instances: wn.InstanceCount, advice: staleAdvice}, true
	}
	return parseStale(oneLine(wn.Message))
}

// parseStale reads a stale-price message back: the fallback for reports
// written before warnings had a stalePrice.
func parseStale(msg string) (staleSource, bool) {
	m := stalePriceMessage.FindStringSubmatch(msg)
	if m == nil {
		return staleSource{}, false
	}
	n, _ := strconv.Atoi(m[7])
	s := staleSource{kind: m[1], source: dataSet(m[2]), asOf: m[3], days: m[4], limit: m[5], key: m[6], instances: n, advice: m[8]}
	return s, true
}

// dataSet is the data set a price source belongs to: one name for every
// rate of it ("… rate $0.79223/h (AWS RIs via …, as of …)" → "… rates (AWS
// RIs via …)"), other sources as they are.
func dataSet(source string) string {
	if c := commitmentRate.FindStringSubmatch(source); c != nil {
		return c[1] + " rates (" + c[2] + ")"
	}
	return source
}

// groupWarnings groups ws by code, stale prices by source.
func groupWarnings(ws []Warning) []*warningGroup {
	var groups []*warningGroup
	byKey := map[string]*warningGroup{}
	stale := map[string]*staleSource{}
	rates := map[string]int{}
	for _, wn := range ws {
		key := wn.Code
		var src staleSource
		isStale := false
		if wn.Code == WarnStalePrice {
			if src, isStale = staleOf(wn); isStale {
				key += "\x00" + src.kind + "\x00" + src.source + "\x00" + src.asOf
			}
		}
		g := byKey[key]
		if g == nil {
			g = &warningGroup{code: wn.Code}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.n++
		example, message := warningExample(wn)
		if g.message == "" {
			g.message = message
		}
		if example != "" && len(g.examples) < maxExamples {
			g.examples = append(g.examples, example)
		}
		if len(g.items) < maxExamples {
			g.items = append(g.items, wn)
		}
		if isStale {
			rates[key]++
			if s := stale[key]; s != nil {
				s.instances += src.instances
			} else {
				stale[key] = &src
			}
			s := stale[key]
			g.stale, g.rates = s, rates[key]
			if rates[key] == 1 {
				continue
			}
			g.merged = true
			g.message = fmt.Sprintf("%s prices from %s as of %s are %s days old, over the %s-day limit (%s); %s priced with them",
				s.kind, s.source, s.asOf, s.days, s.limit, s.key, plural(s.instances, "instance"))
			g.message += fmt.Sprintf(" at %d rates: %s", rates[key], s.advice)
		}
	}
	return groups
}

// warningExample is what a warning is about, for the group's examples (its
// resource, else the scope its message starts with, "aws us-east-1 g5: …"),
// and its message less that.
func warningExample(wn Warning) (string, string) {
	msg := oneLine(wn.Message)
	if wn.ResourceID != "" {
		return wn.ResourceID, msg
	}
	if scope, rest, ok := strings.Cut(msg, ": "); ok && len(scope) <= 40 && !strings.ContainsAny(scope, ".;,()") {
		return scope, rest
	}
	return "", msg
}

// lines are the group as printed, one line each: every warning of a group of
// up to maxExamples as it is, else "code ×N (e.g. a, b, c): message", the
// examples left out when brief.
func (g *warningGroup) lines(brief bool) []string {
	if s := g.stale; s != nil {
		// Stale prices, tersely: the source, its age and limit, what it
		// priced; the policy key and advice are in -o json.
		line := fmt.Sprintf("%s prices from %s: %s days old (as of %s, limit %s), %s", s.kind, s.source, s.days, s.asOf, s.limit, plural(s.instances, "instance"))
		if g.rates > 1 {
			line += fmt.Sprintf(" at %d rates", g.rates)
		}
		return []string{line + "; check current prices before acting [" + g.code + "]"}
	}
	if g.n <= maxExamples && !g.merged {
		out := make([]string, len(g.items))
		for i, wn := range g.items {
			out[i] = warningText(wn)
		}
		return out
	}
	head := fmt.Sprintf("%s ×%d", g.code, g.n)
	if g.merged {
		return []string{g.message + " [" + head + "]"}
	}
	if len(g.examples) > 0 && !brief {
		head += " (e.g. " + strings.Join(g.examples, ", ")
		if g.n > len(g.examples) {
			head += ", …"
		}
		head += ")"
	}
	return []string{head + ": " + g.message}
}

// warningsHeading heads the grouped warnings: "Warnings (440, grouped; each
// one in -o json)" when some are folded.
func warningsHeading(ws []Warning, groups []*warningGroup) string {
	for _, g := range groups {
		if g.n > len(g.items) || g.merged {
			return fmt.Sprintf("Warnings (%d, grouped; each one in -o json)", len(ws))
		}
	}
	return fmt.Sprintf("Warnings (%d)", len(ws))
}
