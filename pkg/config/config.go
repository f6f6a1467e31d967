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
	"strings"

	"github.com/spf13/viper"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// EnvPrefix starts every environment variable gpufinops reads.
const EnvPrefix = "GPUFINOPS"

// Config is the merged configuration.
type Config struct {
	// Policy holds the engine's thresholds.
	Policy recommend.Policy `mapstructure:"policy"`
	// File is the configuration file that was read, if any.
	File string `mapstructure:"-"`
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
			for _, p := range []string{"aws", "azure", "gcp"} {
				*keys = append(*keys, key+"."+p)
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
	cfg := &Config{Policy: recommend.DefaultPolicy()}
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
	if err := cfg.Policy.Validate(); err != nil {
		where := "defaults"
		if file != "" {
			where = "config file " + file + " or environment"
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
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
