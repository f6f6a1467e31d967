// Package config merges the configuration file, GPUFINOPS_* environment
// variables and defaults into a typed Config. It is the only package that
// imports viper. Flags, which win over all three, are applied by the commands
// that own them.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"

	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// EnvPrefix starts every environment variable gpufinops reads.
const EnvPrefix = "GPUFINOPS"

// Config is the merged configuration.
type Config struct {
	// Policy holds the engine's thresholds.
	Policy recommend.Policy `mapstructure:"policy"`
	// AWS configures the AWS adapter.
	AWS AWSConfig `mapstructure:"aws"`
	// Cache configures the on-disk price cache.
	Cache CacheConfig `mapstructure:"cache"`
	// IdleStop is idle-stop's policy; its flags win over it.
	IdleStop idlestop.Policy `mapstructure:"idle_stop"`
	// Report configures how reports are printed.
	Report ReportConfig `mapstructure:"report"`
	// Metrics configures utilization sources outside the clouds (--metrics).
	Metrics MetricsConfig `mapstructure:"metrics"`
	// File is the configuration file that was read, if any.
	File string `mapstructure:"-"`

	// lookupEnv reads GPUFINOPS_REPORT_EXCHANGE_RATES_<CODE>.
	lookupEnv func(string) (string, bool)
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

// AWSConfig configures the AWS adapter; flags (--region, --profile,
// --role-arn) win over it.
type AWSConfig struct {
	// Endpoint sends every AWS call to one URL, e.g. cmd/cloudsim's.
	Endpoint string `mapstructure:"endpoint"`
	// Profiles are shared-config profiles to scan, one account each.
	Profiles []string `mapstructure:"profiles"`
	// RoleARNs are roles to assume for more accounts.
	RoleARNs []string `mapstructure:"role_arns"`
	// Regions limits the scan; empty means every enabled region.
	Regions []string `mapstructure:"regions"`
	// MetricsNamespace is the CloudWatch agent's namespace.
	MetricsNamespace string `mapstructure:"metrics_namespace"`
	// Concurrency bounds the regions scanned at once.
	Concurrency int `mapstructure:"concurrency"`
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

// Keys lists every configuration key, e.g. "policy.idle.gpu_percent", sorted.
func Keys() []string {
	var keys []string
	walk(reflect.TypeOf(Config{}), "", &keys)
	sort.Strings(keys)
	return keys
}

// EnvVar is the environment variable for a key.
func EnvVar(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(key))
}

func walk(t reflect.Type, prefix string, keys *[]string) {
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
		switch f.Type.Kind() {
		case reflect.Struct:
			walk(f.Type, key, keys)
		case reflect.Map:
			// Per-provider maps get a key per cloud; other maps (tag
			// selectors) are set in the file only.
			if strings.HasPrefix(key, "policy.commitment.") {
				for _, p := range []string{"aws", "azure", "gcp"} {
					*keys = append(*keys, key+"."+p)
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
	}
}

// Load reads defaults, then the file, then the environment.
func Load(opts Options) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	cfg := &Config{
		Policy:   recommend.DefaultPolicy(),
		AWS:      AWSConfig{MetricsNamespace: "CWAgent", Concurrency: 8},
		Cache:    CacheConfig{TTLHours: 24},
		IdleStop: idlestop.DefaultPolicy(),

		lookupEnv: lookup,
	}
	for _, k := range Keys() {
		if val, ok := lookup(EnvVar(k)); ok {
			v.Set(k, val)
		}
	}

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
		if err := fileViper.UnmarshalExact(cfg); err != nil {
			return nil, fmt.Errorf("config file %s: %s", file, oneLine(err))
		}
		cfg.File = file
	}
	// Environment variables win over the file.
	if err := v.Unmarshal(cfg); err != nil {
		return nil, fmt.Errorf("environment: %s", oneLine(err))
	}
	if cfg.AWS.Concurrency < 1 || cfg.AWS.Concurrency > 64 {
		return nil, fmt.Errorf("aws.concurrency: %d is outside 1–64", cfg.AWS.Concurrency)
	}
	if cfg.Cache.TTLHours < 0 {
		return nil, fmt.Errorf("cache.ttl_hours: %d is negative", cfg.Cache.TTLHours)
	}
	if err := cfg.IdleStop.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", idleStopSource(err, file, lookup), err)
	}
	if err := cfg.Policy.Validate(); err != nil {
		where := "defaults"
		if file != "" {
			where = "config file " + file + " or environment"
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}

// idleStopSource says where the invalid idle_stop.* value came from: its
// environment variable when set, else the config file.
func idleStopSource(err error, file string, lookup func(string) (string, bool)) string {
	key, _, _ := strings.Cut(err.Error(), ":")
	if name := EnvVar(key); strings.HasPrefix(key, "idle_stop.") {
		if _, ok := lookup(name); ok {
			return "environment " + name
		}
	}
	if file != "" {
		return "config file " + file
	}
	return "idle-stop policy"
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
				keys = append(keys, m[1]+"."+strings.TrimSpace(k))
			}
			line = "unknown key " + strings.Join(keys, ", ")
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
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
