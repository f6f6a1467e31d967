package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/providers"
)

// ProvidersKey is the section of the clouds' options: providers.<cloud>.<option>.
const ProvidersKey = "providers"

// Provider returns the option values of one cloud (defaults when the cloud
// has no section); nil for a cloud that is not registered.
func (c *Config) Provider(cloud string) providers.Values {
	return c.Providers[cloud]
}

// providerSections decodes providers.<cloud>.* generically against the
// options each cloud registers, and the deprecated <cloud>.* sections.
type providerSections struct {
	clouds []*providers.RegInfo
	values map[string]providers.Values
	// source is where each key was set, for errors.
	source   map[string]string
	warnings []string
}

// scannable are the clouds with an adapter: only they have options.
func scannable(clouds []*providers.RegInfo) []*providers.RegInfo {
	var out []*providers.RegInfo
	for _, ri := range clouds {
		if ri.CanScan() {
			out = append(out, ri)
		}
	}
	return out
}

func newProviderSections(clouds []*providers.RegInfo) *providerSections {
	s := &providerSections{clouds: clouds, values: map[string]providers.Values{}, source: map[string]string{}}
	for _, ri := range clouds {
		s.values[string(ri.Name)] = ri.Defaults()
	}
	return s
}

func (s *providerSections) find(cloud string) *providers.RegInfo {
	for _, ri := range s.clouds {
		if string(ri.Name) == cloud {
			return ri
		}
	}
	return nil
}

func (s *providerSections) names() string {
	var out []string
	for _, ri := range s.clouds {
		out = append(out, string(ri.Name))
	}
	if len(out) == 0 {
		return "none registered"
	}
	return strings.Join(out, ", ")
}

// takeFile decodes the providers section and the deprecated per-cloud
// sections of a file's settings and returns the other settings.
func (s *providerSections) takeFile(settings map[string]any, where string) (map[string]any, error) {
	rest := make(map[string]any, len(settings))
	for k, v := range settings {
		rest[k] = v
	}
	// The deprecated sections first, so that providers.<cloud> wins.
	for _, ri := range s.clouds {
		name := string(ri.Name)
		raw, ok := rest[name]
		if !ok {
			continue
		}
		delete(rest, name)
		s.warnings = append(s.warnings, fmt.Sprintf("%s: the %q section is deprecated: move its keys under %s.%s", where, name, ProvidersKey, name))
		if err := s.section(ri, raw, name, where); err != nil {
			return nil, err
		}
	}
	raw, ok := rest[ProvidersKey]
	if !ok {
		return rest, nil
	}
	delete(rest, ProvidersKey)
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, &KeyError{Key: ProvidersKey, Source: where, Msg: fmt.Sprintf("want one section per cloud (%s), got %v", s.names(), raw)}
	}
	for _, cloud := range sortedKeys(m) {
		ri := s.find(cloud)
		if ri == nil {
			return nil, &KeyError{Key: ProvidersKey + "." + cloud, Source: where, Msg: fmt.Sprintf("unknown cloud; clouds: %s", s.names())}
		}
		if err := s.section(ri, m[cloud], ProvidersKey+"."+cloud, where); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

// section decodes one cloud's section, found at prefix.
func (s *providerSections) section(ri *providers.RegInfo, raw any, prefix, where string) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return &KeyError{Key: prefix, Source: where, Msg: fmt.Sprintf("want a section of %s options, got %v", ri.Name, raw)}
	}
	for _, name := range sortedKeys(m) {
		o, ok := ri.Option(name)
		if !ok {
			return &KeyError{Key: prefix + "." + name, Source: where, Msg: "unknown key; " + string(ri.Name) + " options: " + optionNames(ri)}
		}
		if err := s.set(ri, o, m[name], prefix+"."+name, where); err != nil {
			return err
		}
	}
	return nil
}

// takeEnv reads GPUFINOPS_PROVIDERS_<CLOUD>_<OPTION>, and the deprecated
// GPUFINOPS_<CLOUD>_<OPTION>, which it loses to.
func (s *providerSections) takeEnv(lookup func(string) (string, bool)) error {
	for _, ri := range s.clouds {
		for _, o := range ri.AllOptions() {
			legacy := string(ri.Name) + "." + o.Name
			for _, key := range []string{legacy, o.ConfigKey(string(ri.Name))} {
				val, ok := lookup(EnvVar(key))
				if !ok || strings.TrimSpace(val) == "" {
					continue
				}
				if key == legacy {
					s.warnings = append(s.warnings, fmt.Sprintf("environment %s is deprecated: use %s", EnvVar(key), EnvVar(o.ConfigKey(string(ri.Name)))))
				}
				if err := s.set(ri, o, strings.TrimSpace(val), key, "environment "+EnvVar(key)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// set decodes one value.
func (s *providerSections) set(ri *providers.RegInfo, o providers.Option, raw any, key, where string) error {
	v, err := convert(o, raw)
	if err != nil {
		return &KeyError{Key: key, Source: where, Msg: err.Error()}
	}
	s.values[string(ri.Name)][o.Name] = v
	s.source[o.ConfigKey(string(ri.Name))] = where
	return nil
}

// validate runs each option's own check on the merged values.
func (s *providerSections) validate() error {
	for _, ri := range s.clouds {
		for _, o := range ri.AllOptions() {
			if o.Validate == nil {
				continue
			}
			if err := o.Validate(s.values[string(ri.Name)][o.Name]); err != nil {
				key := o.ConfigKey(string(ri.Name))
				where := s.source[key]
				if where == "" {
					where = "default"
				}
				return &KeyError{Key: key, Source: where, Msg: err.Error()}
			}
		}
	}
	return nil
}

// convert turns a value from a file (YAML, JSON, TOML) or the environment
// (a string) into the option's type.
func convert(o providers.Option, raw any) (any, error) {
	switch o.Default.(type) {
	case string:
		if v, ok := scalar(raw); ok {
			return v, nil
		}
		return nil, fmt.Errorf("want a string, got %v", raw)
	case []string:
		var out []string
		switch r := raw.(type) {
		case string:
			for _, part := range strings.Split(r, ",") {
				if part = strings.TrimSpace(part); part != "" {
					out = append(out, part)
				}
			}
		case []any:
			for _, e := range r {
				v, ok := scalar(e)
				if !ok {
					return nil, fmt.Errorf("want a list of words, got %v", raw)
				}
				out = append(out, v)
			}
		case []string:
			out = slices.Clone(r)
		default:
			return nil, fmt.Errorf("want a list of words (or one comma-separated string), got %v", raw)
		}
		if out == nil {
			out = []string{}
		}
		return out, nil
	case int:
		switch r := raw.(type) {
		case int:
			return r, nil
		case int64:
			return int(r), nil
		case float64:
			if r == math.Trunc(r) && math.Abs(r) < maxMagnitude {
				return int(r), nil
			}
		case string:
			if n, err := strconv.Atoi(strings.TrimSpace(r)); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("want a whole number (%v)", raw)
	case bool:
		switch r := raw.(type) {
		case bool:
			return r, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(r)); err == nil {
				return b, nil
			}
		}
		return nil, fmt.Errorf("want true or false (%v)", raw)
	case time.Duration:
		if r, ok := raw.(string); ok {
			if d, err := time.ParseDuration(strings.TrimSpace(r)); err == nil {
				return d, nil
			}
		}
		return nil, fmt.Errorf("want a duration such as 30m (%v)", raw)
	}
	return nil, fmt.Errorf("option of type %T cannot be configured", o.Default)
}

// scalar is a word, number or boolean as a string.
func scalar(raw any) (string, bool) {
	switch r := raw.(type) {
	case string:
		return r, true
	case int, int64, float64, bool:
		return fmt.Sprint(r), true
	}
	return "", false
}

func optionNames(ri *providers.RegInfo) string {
	var out []string
	for _, o := range ri.AllOptions() {
		out = append(out, o.Name)
	}
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Concurrency is how many scopes of a cloud are scanned at once
// (providers.<cloud>.concurrency), 8 for a cloud without options.
func (c *Config) Concurrency(cloud string) int {
	if n := c.Provider(cloud).Int(providers.OptConcurrency); n > 0 {
		return n
	}
	return 8
}

// DeprecatedEnvVars are the GPUFINOPS_<CLOUD>_<OPTION> variables still read
// (with a warning) for every scannable cloud's options, sorted.
func DeprecatedEnvVars() []string {
	var out []string
	for _, ri := range scannable(providers.Registered()) {
		for _, o := range ri.AllOptions() {
			out = append(out, EnvVar(string(ri.Name)+"."+o.Name))
		}
	}
	sort.Strings(out)
	return out
}
