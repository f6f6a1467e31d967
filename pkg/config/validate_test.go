package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// floatKeys lists the configuration keys that hold one number.
func floatKeys(t reflect.Type, prefix string, out *[]string) {
	fields(t, prefix, func(key string, f reflect.StructField) {
		if f.Type.Kind() == reflect.Float64 {
			*out = append(*out, key)
		}
	})
}

// yamlFor nests value under the dotted key.
func yamlFor(key, value string) string {
	var b strings.Builder
	for i, part := range strings.Split(key, ".") {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.Repeat("  ", i) + part + ":")
	}
	return b.String() + " " + value + "\n"
}

func TestEveryNumberRefusesNonFinite(t *testing.T) {
	var keys []string
	floatKeys(reflect.TypeOf(Config{}), "", &keys)
	if len(keys) < 25 {
		t.Fatalf("only %d number keys: %v", len(keys), keys)
	}
	envSpellings := []string{"NaN", "nan", "NAN", "+Inf", "-Inf", "Infinity", "-Infinity", "+infinity", "1e309", "-1e309", "1e300", " nan "}
	fileSpellings := []string{".nan", ".NaN", ".inf", "-.Inf", "+.inf", "1e309", "1e300", `"NaN"`, `"+Infinity"`, "1e13"}
	for _, key := range keys {
		for _, v := range envSpellings {
			name := EnvVar(key)
			_, err := Load(Options{LookupEnv: env(map[string]string{name: v})})
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != key || ke.Source != "environment "+name {
				t.Errorf("%s=%q: got %v, want a KeyError naming %s and %s", name, v, err, key, name)
			}
		}
		for _, v := range fileSpellings {
			file := write(t, "c.yaml", yamlFor(key, v))
			_, err := Load(Options{File: file, LookupEnv: env(nil)})
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != key || ke.Source != "config file "+file {
				t.Errorf("%s: %s in a file: got %v, want a KeyError naming the key and the file", key, v, err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: message has several lines: %q", key, err)
			}
		}
	}
}

func TestRangesNameTheSource(t *testing.T) {
	for _, tc := range []struct {
		name, key, file string
		env             map[string]string
		want            string
	}{
		{"threshold negative in env", "policy.idle.gpu_percent", "", map[string]string{"GPUFINOPS_POLICY_IDLE_GPU_PERCENT": "-5"}, "is outside 0–100"},
		{"threshold above 100 in file", "policy.idle.gpu_percent", "policy: {idle: {gpu_percent: 100.01}}", nil, "is outside 0–100"},
		{"huge count in env", "policy.quantize.batch", "", map[string]string{"GPUFINOPS_POLICY_QUANTIZE_BATCH": "99999999999"}, "out of range"},
		{"huge int in file", "policy.quantize.context", "policy: {quantize: {context: 100000000000}}", nil, "out of range"},
		{"int with a fraction", "providers.acme.concurrency", "", map[string]string{"GPUFINOPS_PROVIDERS_ACME_CONCURRENCY": "2.5"}, "want a whole number"},
		{"concurrency zero", "providers.acme.concurrency", "providers: {acme: {concurrency: 0}}", nil, "outside 1–64"},
		{"concurrency zero in the deprecated section", "providers.acme.concurrency", "acme: {concurrency: 0}", nil, "outside 1–64"},
		{"adapter option check", "providers.acme.namespace", "providers: {acme: {namespace: ''}}", nil, "empty namespace"},
		{"adapter option check in env", "providers.acme.namespace", "", map[string]string{"GPUFINOPS_PROVIDERS_ACME_NAMESPACE": "bad/ns"}, "no slashes"},
		{"unknown adapter option", "providers.acme.profile", "providers: {acme: {profile: prod}}", nil, "unknown key; acme options: endpoint, regions, concurrency, profiles, namespace"},
		{"unknown cloud", "providers.oracle", "providers: {oracle: {regions: [a]}}", nil, "unknown cloud; clouds: acme"},
		{"cloud without an adapter", "providers.dataonly", "providers: {dataonly: {regions: [a]}}", nil, "unknown cloud; clouds: acme"},
		{"list of maps", "providers.acme.profiles", "providers: {acme: {profiles: [{a: 1}]}}", nil, "want a list of words"},
		{"section not a map", "providers.acme", "providers: {acme: 3}", nil, "want a section of acme options"},
		{"ttl negative in env", "cache.ttl_hours", "", map[string]string{"GPUFINOPS_CACHE_TTL_HOURS": "-1"}, "outside 0–8760"},
		{"ttl ten years", "cache.ttl_hours", "cache: {ttl_hours: 87600}", nil, "outside 0–8760"},
		{"discount above 1", "policy.commitment.discounts_1y.aws", "", map[string]string{"GPUFINOPS_POLICY_COMMITMENT_DISCOUNTS_1Y_AWS": "1.5"}, "fraction"},
		{"discount NaN", "policy.commitment.discounts_3y.gcp", "", map[string]string{"GPUFINOPS_POLICY_COMMITMENT_DISCOUNTS_3Y_GCP": "NaN"}, "not a finite number"},
		{"discount Inf in file", "policy.commitment.discounts_3y.azure", "policy: {commitment: {discounts_3y: {azure: .inf}}}", nil, "not a finite number"},
		{"rate zero", "report.exchange_rates.EUR", "report: {exchange_rates: {EUR: 0}}", nil, "outside"},
		{"rate negative", "report.exchange_rates.EUR", "report: {exchange_rates: {EUR: -0.9}}", nil, "outside"},
		{"rate absurd", "report.exchange_rates.JPY", "report: {exchange_rates: {JPY: 1e9}}", nil, "outside"},
		{"rate NaN", "report.exchange_rates.eur", "report: {exchange_rates: {EUR: .nan}}", nil, "not a finite number"},
		{"bad code", "report.exchange_rates.EURO", "report: {exchange_rates: {EURO: 0.9}}", nil, "currency code"},
		{"sharing", "policy.sharing.target_gpu_percent", "", map[string]string{"GPUFINOPS_POLICY_SHARING_TARGET_GPU_PERCENT": "Inf"}, "not a finite number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := ""
			if tc.file != "" {
				file = write(t, "c.yaml", tc.file+"\n")
			}
			_, err := Load(Options{File: file, LookupEnv: env(tc.env)})
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("got %v, want a KeyError", err)
			}
			wantSource := "config file " + file
			if file == "" {
				wantSource = "environment " + EnvVar(tc.key)
			}
			if ke.Key != tc.key || ke.Source != wantSource || !strings.Contains(ke.Msg, tc.want) {
				t.Errorf("got %q (key %s, source %s), want key %s, source %s, %q", err, ke.Key, ke.Source, tc.key, wantSource, tc.want)
			}
		})
	}
}

func TestBlankEnvIsUnset(t *testing.T) {
	cfg, err := Load(Options{LookupEnv: env(map[string]string{"GPUFINOPS_POLICY_IDLE_GPU_PERCENT": "  ", "GPUFINOPS_PROVIDERS_ACME_CONCURRENCY": " 4 ", "GPUFINOPS_PROVIDERS_ACME_REGIONS": " "})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy.Idle.GPUPercent != 15 || cfg.Provider("acme").Int("concurrency") != 4 || len(cfg.Provider("acme").Strings("regions")) != 0 {
		t.Errorf("got %v and %v", cfg.Policy.Idle.GPUPercent, cfg.Provider("acme"))
	}
	if got := cfg.Source("policy.idle.gpu_percent"); got != "default" {
		t.Errorf("Source = %q", got)
	}
}

func TestCheckExchangeRate(t *testing.T) {
	for _, r := range []float64{1e-6, 0.92, 1, 160.5, 1e6} {
		if err := CheckExchangeRate(r); err != nil {
			t.Errorf("%v: %v", r, err)
		}
	}
	for _, r := range []float64{0, -1, 1e-7, 1e6 + 1, nan(), inf(1), inf(-1)} {
		if err := CheckExchangeRate(r); err == nil {
			t.Errorf("%v accepted", r)
		}
	}
}

func nan() float64      { return zero / zero }
func inf(s int) float64 { return float64(s) / zero }

var zero float64
