// Package config merges the configuration file, GPUFINOPS_* environment
// variables and defaults into a typed Config. It is the only package that
// imports viper. Flags, which win over all three, are applied by the commands
// that own them.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/suggest"
	"github.com/gpufinops/gpufinops/providers"
)

// EnvPrefix starts every environment variable gpufinops reads.
const EnvPrefix = "GPUFINOPS"

// Config is the merged configuration.
type Config struct {
	// Policy holds the engine's thresholds.
	Policy recommend.Policy `mapstructure:"policy"`
	// Providers holds each registered cloud's options by cloud and option
	// name (providers.<cloud>.<option>), defaults filled in; see Provider.
	Providers map[string]providers.Values `mapstructure:"-"`
	// Cache configures the on-disk price cache.
	Cache CacheConfig `mapstructure:"cache"`
	// IdleStop is idle-stop's policy; its flags win over it.
	IdleStop idlestop.Policy `mapstructure:"idle_stop"`
	// Report configures how reports are printed.
	Report ReportConfig `mapstructure:"report"`
	// Analyze configures analyze beyond the engine's policy; its flags win.
	Analyze AnalyzeConfig `mapstructure:"analyze"`
	// Metrics configures utilization sources outside the clouds (--metrics).
	Metrics MetricsConfig `mapstructure:"metrics"`
	// Timeouts bound network calls and idle-stop runs.
	Timeouts TimeoutsConfig `mapstructure:"timeouts"`
	// Locks configures idle-stop's per-target locks and shared stop cap.
	Locks LocksConfig `mapstructure:"locks"`
	// Audit configures idle-stop's audit log.
	Audit AuditConfig `mapstructure:"audit"`
	// File is the configuration file that was read, if any.
	File string `mapstructure:"-"`
	// Warnings are things to tell the user about the configuration, e.g. a
	// deprecated key; the factory prints them on stderr.
	Warnings []string `mapstructure:"-"`

	// lookupEnv reads GPUFINOPS_REPORT_EXCHANGE_RATES_<CODE>.
	lookupEnv func(string) (string, bool)
}

// TimeoutsConfig is timeouts.*; the --connect-timeout, --request-timeout,
// --run-timeout and --grace-period flags win.
type TimeoutsConfig struct {
	// Connect bounds opening a connection to a cloud (TCP and TLS); a
	// connection refused or not opened in time is not retried.
	Connect time.Duration `mapstructure:"connect"`
	// Request bounds each HTTP request to a cloud or webhook (one attempt).
	Request time.Duration `mapstructure:"request"`
	// Run bounds a whole idle-stop run or live scan, retries included.
	Run time.Duration `mapstructure:"run"`
	// Grace is how long stops in flight may finish after SIGINT, SIGTERM or
	// the run timeout.
	Grace time.Duration `mapstructure:"grace"`
}

// LocksConfig is locks.*; --lock-dir and --lock-wait win.
type LocksConfig struct {
	// Dir holds one lock per target and the stop ledger; empty means
	// $XDG_STATE_HOME/gpufinops/locks (~/.local/state/gpufinops/locks).
	Dir string `mapstructure:"dir"`
	// Wait is how long a run waits for another run's lock.
	Wait time.Duration `mapstructure:"wait"`
}

// AuditConfig is audit.*; --audit-log wins.
type AuditConfig struct {
	// Log is the audit log of idle-stop; empty means
	// $XDG_STATE_HOME/gpufinops/idle-stop.jsonl for --execute runs.
	Log string `mapstructure:"log"`
}

// The default timeouts.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultRunTimeout     = 10 * time.Minute
	DefaultLockWait       = 5 * time.Minute
)

// DurationRange is the range a duration setting may take.
type DurationRange struct{ Min, Max time.Duration }

// DurationRanges are the ranges of the timeouts.* and locks.* keys; the
// flags that set them (--connect-timeout, --request-timeout, --run-timeout,
// --grace-period, --lock-wait) are checked against the same ranges.
var DurationRanges = map[string]DurationRange{
	"timeouts.connect": {time.Millisecond, 10 * time.Minute},
	"timeouts.request": {time.Millisecond, time.Hour},
	"timeouts.run":     {time.Millisecond, 24 * time.Hour},
	"timeouts.grace":   {0, 10 * time.Minute},
	"locks.wait":       {time.Millisecond, 24 * time.Hour},
}

// Check reports whether d is within the range.
func (r DurationRange) Check(d time.Duration) error {
	if d < r.Min || d > r.Max {
		return fmt.Errorf("%v is outside %v–%v", d, r.Min, r.Max)
	}
	return nil
}

// validateRun checks the timeouts and lock settings, naming the key.
func (c *Config) validateRun() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"timeouts.connect", c.Timeouts.Connect},
		{"timeouts.request", c.Timeouts.Request},
		{"timeouts.run", c.Timeouts.Run},
		{"timeouts.grace", c.Timeouts.Grace},
		{"locks.wait", c.Locks.Wait},
	} {
		if err := DurationRanges[d.key].Check(d.v); err != nil {
			return c.errorAt(d.key, "%v", err)
		}
	}
	return nil
}

// MetricsConfig configures utilization sources outside the clouds.
type MetricsConfig struct {
	// Prometheus is the Prometheus-compatible store of DCGM series.
	Prometheus PrometheusConfig `mapstructure:"prometheus"`
}

// PrometheusConfig is metrics.prometheus.*; the --prometheus-* flags win.
type PrometheusConfig struct {
	URL                string            `mapstructure:"url"`
	BearerTokenFile    string            `mapstructure:"bearer_token_file"`
	Username           string            `mapstructure:"username"`
	Password           string            `mapstructure:"password"`
	CAFile             string            `mapstructure:"ca_file"`
	InsecureSkipVerify bool              `mapstructure:"insecure_skip_verify"`
	Headers            map[string]string `mapstructure:"headers"`
	InstanceLabel      string            `mapstructure:"instance_label"`
	HostLabel          string            `mapstructure:"host_label"`
	NodeLabel          string            `mapstructure:"node_label"`
}

// AnalyzeConfig is analyze.*; --include-protected wins.
type AnalyzeConfig struct {
	// IncludeProtected counts the stop, schedule and deallocate savings of
	// machines idle-stop protects (idle_stop.* settings) in the report's
	// saving; by default their advice says what releasing them would save
	// and saves nothing.
	IncludeProtected bool `mapstructure:"include_protected"`
	// ISFRatios is Microsoft's instance size flexibility ratio table
	// (https://aka.ms/isf: InstanceSizeFlexibilityGroup,ArmSkuName,Ratio),
	// a CSV file: size-flexible Azure reservations cover the other sizes
	// of their group by its ratios. Empty derives the groups of GPU sizes
	// from their names (docs/commitments.md). analyze reads it
	// (coverage.ReadISFFile).
	ISFRatios string `mapstructure:"isf_ratios"`
}

// ReportConfig configures how reports are printed.
type ReportConfig struct {
	// ExchangeRates maps a currency code to the units of it one USD buys,
	// for --currency: report.exchange_rates.EUR: 0.92, or the variable
	// GPUFINOPS_REPORT_EXCHANGE_RATES_EUR.
	ExchangeRates map[string]float64 `mapstructure:"exchange_rates"`
}

// ExchangeRate returns the configured rate for a currency code (units per
// USD, as written) and where it was set: the environment variable wins over
// the config file. ok is false when neither sets it.
func (c *Config) ExchangeRate(code string) (rate, source string, ok bool) {
	code = strings.ToUpper(code)
	if c.lookupEnv != nil {
		name := EnvVar("report.exchange_rates." + code)
		if v, found := c.lookupEnv(name); found && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), "environment " + name, true
		}
	}
	for k, v := range c.Report.ExchangeRates {
		if strings.ToUpper(k) == code {
			where := "config key report.exchange_rates." + code
			if c.File != "" {
				where = "config file " + c.File
			}
			return strconv.FormatFloat(v, 'f', -1, 64), where, true
		}
	}
	return "", "", false
}

// CacheConfig configures the price cache.
type CacheConfig struct {
	// Dir is where cached price lists live; empty means the user cache dir.
	Dir string `mapstructure:"dir"`
	// TTLHours is how long cached prices are used.
	TTLHours int `mapstructure:"ttl_hours"`
}

// Options say where to look.
type Options struct {
	// File is an explicit --config path; it must exist.
	File string
	// LookupEnv reads the environment; os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
	// Providers are the registered clouds: those with an adapter have a
	// providers.<cloud> section, all may give purchase defaults; nil means
	// providers.Registered().
	Providers []*providers.RegInfo
}

// DefaultFile is $XDG_CONFIG_HOME/gpufinops/config.yaml, or
// ~/.config/gpufinops/config.yaml when XDG_CONFIG_HOME is unset.
func DefaultFile(lookup func(string) (string, bool)) string {
	if dir, ok := lookup("XDG_CONFIG_HOME"); ok && dir != "" {
		return filepath.Join(dir, "gpufinops", "config.yaml")
	}
	if home, ok := lookup("HOME"); ok && home != "" {
		return filepath.Join(home, ".config", "gpufinops", "config.yaml")
	}
	return ""
}

// Keys lists every configuration key, e.g. "policy.idle.gpu_percent", those
// of every registered cloud's options included, sorted.
func Keys() []string { return keysOf(providers.Registered()) }

func keysOf(clouds []*providers.RegInfo) []string {
	var keys []string
	walk(reflect.TypeOf(Config{}), "", &keys)
	for _, ri := range scannable(clouds) {
		for _, o := range ri.AllOptions() {
			keys = append(keys, o.ConfigKey(string(ri.Name)))
		}
	}
	sort.Strings(keys)
	return keys
}

// keySeparator turns a dotted key into its environment variable's form.
var keySeparator = strings.NewReplacer(".", "_")

// EnvVar is the environment variable for a key.
func EnvVar(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(keySeparator.Replace(key))
}

func walk(t reflect.Type, prefix string, keys *[]string) {
	fields(t, prefix, func(key string, f reflect.StructField) {
		switch f.Type.Kind() {
		case reflect.Map:
			// Per-provider maps get a key per cloud; other maps (tag
			// selectors) are set in the file only.
			if strings.HasPrefix(key, "policy.commitment.") {
				for _, p := range fleet.Providers {
					*keys = append(*keys, key+"."+string(p))
				}
			}
		case reflect.Slice:
			// A list of objects is set in the file only; a list of words also
			// from the environment (comma-separated).
			if f.Type.Elem().Kind() != reflect.Struct {
				*keys = append(*keys, key)
			}
		default:
			*keys = append(*keys, key)
		}
	})
}

// fields calls fn with the dotted key of each field of t that has a
// mapstructure tag, going into nested structs rather than naming them.
func fields(t reflect.Type, prefix string, fn func(key string, f reflect.StructField)) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		if f.Type.Kind() == reflect.Struct {
			fields(f.Type, key, fn)
			continue
		}
		fn(key, f)
	}
}

// Load reads defaults, then the file, then the environment, and validates
// the result (Validate). An environment variable that is empty or blank
// counts as unset; surrounding spaces are ignored.
func Load(opts Options) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	clouds := opts.Providers
	if clouds == nil {
		clouds = providers.Registered()
	}
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(keySeparator)
	cfg := &Config{
		Policy:   recommend.DefaultPolicy(),
		Cache:    CacheConfig{TTLHours: 24},
		IdleStop: idlestop.DefaultPolicy(),
		Timeouts: TimeoutsConfig{Connect: DefaultConnectTimeout, Request: DefaultRequestTimeout, Run: DefaultRunTimeout, Grace: idlestop.DefaultGrace},
		Locks:    LocksConfig{Wait: DefaultLockWait},

		lookupEnv: lookup,
	}
	// Each cloud's commitment kind, payment and name are the defaults of
	// policy.commitment.plans, .payments and .names; the file and the
	// environment still win.
	cfg.Policy = cfg.Policy.WithPurchases(providers.PurchasesOf(clouds))
	for _, k := range keysOf(nil) {
		if val, ok := lookup(EnvVar(k)); ok && strings.TrimSpace(val) != "" {
			v.Set(k, strings.TrimSpace(val))
		}
	}
	sections := newProviderSections(scannable(clouds))

	file := opts.File
	if file == "" {
		if d := DefaultFile(lookup); d != "" {
			if _, err := os.Stat(d); err == nil {
				file = d
			}
		}
	}
	fileViper := viper.New()
	if file != "" {
		fileViper.SetConfigFile(file)
		fileViper.SetConfigType(configType(file))
		if err := fileViper.ReadInConfig(); err != nil {
			var pathErr *fs.PathError
			if errors.As(err, &pathErr) {
				return nil, fmt.Errorf("config file %s: %w", file, pathErr.Err)
			}
			return nil, fmt.Errorf("config file %s: %s", file, oneLine(err))
		}
		cfg.File = file
		rest, err := sections.takeFile(fileViper.AllSettings(), "config file "+file)
		if err != nil {
			return nil, err
		}
		fileViper = viper.New()
		if err := fileViper.MergeConfigMap(rest); err != nil {
			return nil, fmt.Errorf("config file %s: %s", file, oneLine(err))
		}
		if err := fileViper.UnmarshalExact(cfg); err != nil {
			msg := oneLine(err)
			if m := quotedKey.FindStringSubmatch(msg); m != nil && !strings.HasPrefix(msg, "unknown key") {
				return nil, &KeyError{Key: m[1], Source: "config file " + file, Msg: decodeMsg(strings.TrimSpace(strings.Replace(msg, m[0], "", 1)))}
			}
			return nil, fmt.Errorf("config file %s: %s", file, msg)
		}
	}
	// Environment variables win over the file.
	if err := v.Unmarshal(cfg); err != nil {
		msg := oneLine(err)
		if m := quotedKey.FindStringSubmatch(msg); m != nil {
			return nil, &KeyError{Key: m[1], Source: "environment " + EnvVar(m[1]), Msg: decodeMsg(strings.TrimSpace(strings.Replace(msg, m[0], "", 1)))}
		}
		return nil, fmt.Errorf("environment: %s", msg)
	}
	if err := sections.takeEnv(lookup); err != nil {
		return nil, err
	}
	cfg.Providers, cfg.Warnings = sections.values, append(cfg.Warnings, sections.warnings...)
	if err := sections.validate(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

var (
	quotedKey  = regexp.MustCompile(`'([a-z0-9_.]+)'`)
	parseError = regexp.MustCompile(`cannot parse value as '([\w.]+)': (?:strconv\.\w+: )?(?:parsing "[^"]*": )?(.*)`)
)

// decodeMsg rewrites the decoder's complaint about a value in plain words.
func decodeMsg(msg string) string {
	m := parseError.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := map[string]string{"float64": "a number", "int": "a whole number", "bool": "true or false",
		"time.Duration": "a duration such as 30m"}[m[1]]
	if want == "" {
		want = "a " + m[1]
	}
	return fmt.Sprintf("want %s (%s)", want, m[2])
}

// KeyError is a configuration value that is out of range: its key, where it
// was set and what is wrong with it, printed on one line.
type KeyError struct {
	// Key is the configuration key, e.g. policy.idle.gpu_percent.
	Key string
	// Source is where the value came from: "environment GPUFINOPS_…",
	// "config file PATH" or "default".
	Source string
	// Msg says what is wrong and what is expected.
	Msg string
}

func (e *KeyError) Error() string { return e.Source + ": " + e.Key + ": " + e.Msg }

// Limits of the configuration's values outside the policy.
const (
	// MinExchangeRate and MaxExchangeRate bound an exchange rate (units of
	// a currency one USD buys): every currency in use lies well inside.
	MinExchangeRate = 1e-6
	MaxExchangeRate = 1e6
	// MaxCacheTTLHours is a year.
	MaxCacheTTLHours = 365 * 24
	// maxMagnitude bounds every number of the configuration.
	maxMagnitude = 1e12
)

// Source names where the value of key came from: its environment variable,
// the config file, or the default.
func (c *Config) Source(key string) string {
	if c.lookupEnv != nil {
		if val, ok := c.lookupEnv(EnvVar(key)); ok && strings.TrimSpace(val) != "" {
			return "environment " + EnvVar(key)
		}
	}
	if c.File != "" {
		return "config file " + c.File
	}
	return "default"
}

// errorAt is the KeyError for key.
func (c *Config) errorAt(key, format string, args ...any) error {
	return &KeyError{Key: key, Source: c.Source(key), Msg: fmt.Sprintf(format, args...)}
}

// Validate checks the merged configuration — defaults, file and environment
// — and returns the first bad value as a *KeyError naming its key and where
// it was set: a number that is NaN, ±Inf or absurdly large anywhere, an
// exchange rate outside MinExchangeRate–MaxExchangeRate, and each policy's
// own ranges (recommend.Policy.Validate, idlestop.Policy.Validate).
// Commands that lay flags over the policy validate the result again.
func (c *Config) Validate() error {
	if key, msg := checkNumbers(reflect.ValueOf(*c), ""); key != "" {
		return c.errorAt(key, "%s", msg)
	}
	codes := make([]string, 0, len(c.Report.ExchangeRates))
	for code := range c.Report.ExchangeRates {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		key := "report.exchange_rates." + strings.ToUpper(code)
		if err := CheckExchangeRate(c.Report.ExchangeRates[code]); err != nil {
			return c.errorAt(key, "%v", err)
		}
		if !currencyCode.MatchString(code) {
			return c.errorAt(key, "%q is not a currency code such as EUR", code)
		}
	}
	if c.Cache.TTLHours < 0 || c.Cache.TTLHours > MaxCacheTTLHours {
		return c.errorAt("cache.ttl_hours", "%d is outside 0–%d", c.Cache.TTLHours, MaxCacheTTLHours)
	}
	if err := c.validateRun(); err != nil {
		return err
	}
	if err := c.IdleStop.Validate(); err != nil {
		if key, msg, ok := strings.Cut(err.Error(), ": "); ok && strings.HasPrefix(key, "idle_stop.") && !strings.Contains(key, " ") {
			return c.errorAt(key, "%s", msg)
		}
		return fmt.Errorf("idle-stop policy: %w", err)
	}
	if err := c.Policy.Validate(); err != nil {
		var pe *recommend.PolicyError
		if errors.As(err, &pe) {
			return c.errorAt(pe.Key, "%s", pe.Msg)
		}
		return err
	}
	return nil
}

var currencyCode = regexp.MustCompile(`^[A-Za-z]{3}$`)

// CheckExchangeRate refuses a rate that is not a finite number within
// MinExchangeRate–MaxExchangeRate.
func CheckExchangeRate(rate float64) error {
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0):
		return fmt.Errorf("%v is not a finite number; want units of the currency one USD buys, e.g. 0.92", rate)
	case rate < MinExchangeRate || rate > MaxExchangeRate:
		return fmt.Errorf("%v is outside %g–%g (units of the currency one USD buys, e.g. 0.92)", rate, MinExchangeRate, MaxExchangeRate)
	}
	return nil
}

// checkNumbers walks v and returns the key of the first number that is NaN,
// ±Inf or larger than maxMagnitude, and why.
func checkNumbers(v reflect.Value, key string) (string, string) {
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("mapstructure")
			if tag == "" || tag == "-" || !f.IsExported() {
				continue
			}
			if k, msg := checkNumbers(v.Field(i), join(tag)); k != "" {
				return k, msg
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if kk, msg := checkNumbers(v.MapIndex(k), join(fmt.Sprint(k))); kk != "" {
				return kk, msg
			}
		}
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return key, fmt.Sprintf("%v is not a finite number", f)
		}
		if math.Abs(f) > maxMagnitude {
			return key, fmt.Sprintf("%g is out of range", f)
		}
	}
	return "", ""
}

var invalidKeys = regexp.MustCompile(`'([^']*)' has invalid keys: (.*)`)

// oneLine turns the decoder's multi-line errors into one line, naming unknown
// keys by their full path.
func oneLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "decoding failed due to") {
			continue
		}
		line = strings.TrimPrefix(line, "* ")
		if m := invalidKeys.FindStringSubmatch(line); m != nil {
			var keys []string
			for _, k := range strings.Split(m[2], ",") {
				k = strings.TrimSpace(k)
				if m[1] != "" {
					k = m[1] + "." + k
				}
				keys = append(keys, k+suggest.Phrase(k, keysNear(k), suggest.Quoted))
			}
			line = "unknown key " + strings.Join(keys, ", ")
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

// keysNear are the keys and sections beside key (same parent), to
// suggest in place of a mistyped one.
func keysNear(key string) []string {
	parent := ""
	if i := strings.LastIndex(key, "."); i >= 0 {
		parent = key[:i+1]
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range Keys() {
		if !strings.HasPrefix(k, parent) {
			continue
		}
		next, _, _ := strings.Cut(k[len(parent):], ".")
		if c := parent + next; !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func configType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return "json"
	case ".toml":
		return "toml"
	default:
		return "yaml"
	}
}
