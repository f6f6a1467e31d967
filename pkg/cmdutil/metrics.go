package cmdutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/metrics"
	"github.com/gpufinops/gpufinops/pkg/metrics/nvsmi"
	"github.com/gpufinops/gpufinops/pkg/metrics/prometheus"
)

// Metrics sources selectable with --metrics.
const (
	MetricsCloud      = "cloud"
	MetricsPrometheus = "prometheus"
)

// MetricsFlags choose where utilization comes from when it is not the
// fleet file's or the cloud's own: Prometheus/DCGM or nvidia-smi CSV files.
type MetricsFlags struct {
	// Source is "cloud" (the default: the fleet's or the scan's own) or
	// "prometheus".
	Source string
	// PrometheusURL, BearerTokenFile, Headers (K=V) and InstanceLabel
	// override metrics.prometheus.* of the configuration.
	PrometheusURL   string
	BearerTokenFile string
	Headers         []string
	InstanceLabel   string
	// Files are nvidia-smi CSV files (--metrics-file).
	Files []string
	// Now is the clock the Prometheus window ends at; nil is time.Now.
	Now func() time.Time
}

// addMetricsFlags adds --metrics, the --prometheus-* flags and --metrics-file.
func addMetricsFlags(cmd *cobra.Command, m *MetricsFlags) {
	fs := cmd.Flags()
	fs.StringVar(&m.Source, "metrics", "", "where utilization comes from: cloud (default: the fleet's or the cloud's own) or prometheus (DCGM exporter series)")
	fs.StringVar(&m.PrometheusURL, "prometheus-url", "", "Prometheus-compatible query URL for --metrics prometheus (default: metrics.prometheus.url)")
	fs.StringVar(&m.BearerTokenFile, "prometheus-bearer-token-file", "", "file holding a bearer token for Prometheus")
	fs.StringArrayVar(&m.Headers, "prometheus-header", nil, "extra request header K=V for Prometheus, e.g. X-Scope-OrgID=team (repeatable)")
	fs.StringVar(&m.InstanceLabel, "prometheus-instance-label", "", "label holding the instance ID on DCGM series (default instance_id)")
	fs.StringArrayVar(&m.Files, "metrics-file", nil, "nvidia-smi CSV (--query-gpu=timestamp,index,utilization.gpu,memory.used,memory.total --format=csv) of one machine, matched by a host column or the file name (repeatable)")
	_ = cmd.MarkFlagFilename("metrics-file", "csv")
	_ = cmd.MarkFlagFilename("prometheus-bearer-token-file")
	_ = cmd.RegisterFlagCompletionFunc("metrics", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{MetricsCloud, MetricsPrometheus}, cobra.ShellCompDirectiveNoFileComp
	})
}

// validate checks the metrics flags on their own.
func (m *MetricsFlags) validate() error {
	switch m.Source {
	case "", MetricsCloud, MetricsPrometheus:
	default:
		return FlagErrorf("--metrics: %q is not one of cloud, prometheus", m.Source)
	}
	if m.Source != MetricsPrometheus && (m.PrometheusURL != "" || m.BearerTokenFile != "" || len(m.Headers) > 0 || m.InstanceLabel != "") {
		return FlagErrorf("--prometheus-* flags need --metrics prometheus")
	}
	for _, h := range m.Headers {
		if k, _, ok := strings.Cut(h, "="); !ok || strings.TrimSpace(k) == "" {
			return FlagErrorf("--prometheus-header: %q is not K=V", h)
		}
	}
	return nil
}

// prometheusOptions merges the flags over metrics.prometheus.* of the configuration.
func (m *MetricsFlags) prometheusOptions(c config.PrometheusConfig) prometheus.Options {
	o := prometheus.Options{
		URL: c.URL, BearerTokenFile: c.BearerTokenFile, Username: c.Username, Password: c.Password,
		CAFile: c.CAFile, InsecureSkipVerify: c.InsecureSkipVerify, InstanceLabel: c.InstanceLabel,
		HostLabel: c.HostLabel, NodeLabel: c.NodeLabel, Headers: map[string]string{},
	}
	for k, v := range c.Headers {
		o.Headers[k] = v
	}
	if m.PrometheusURL != "" {
		o.URL = m.PrometheusURL
	}
	if m.BearerTokenFile != "" {
		o.BearerTokenFile = m.BearerTokenFile
	}
	if m.InstanceLabel != "" {
		o.InstanceLabel = m.InstanceLabel
	}
	for _, h := range m.Headers {
		k, v, _ := strings.Cut(h, "=")
		o.Headers[strings.TrimSpace(k)] = v
	}
	return o
}

// metricsRead is one source to read with its window.
type metricsRead struct {
	src    metrics.Source
	window fleet.TimeRange
}

// sources builds the sources the flags ask for. A malformed CSV is an
// InputError (exit 2); a bad Prometheus setting a FlagError.
func (m *MetricsFlags) sources(cfg *config.Config, lookbackDays int) ([]metricsRead, error) {
	var out []metricsRead
	if m.Source == MetricsPrometheus {
		src, err := prometheus.New(m.prometheusOptions(cfg.Metrics.Prometheus))
		if err != nil {
			return nil, FlagErrorf("%v", err)
		}
		now := time.Now
		if m.Now != nil {
			now = m.Now
		}
		end := now().UTC().Truncate(time.Hour)
		out = append(out, metricsRead{src: src, window: fleet.TimeRange{Start: end.Add(-time.Duration(lookbackDays) * 24 * time.Hour), End: end}})
	}
	if len(m.Files) > 0 {
		src, err := nvsmi.Open(m.Files...)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		// The files' own span is the window: they are one-off checks.
		out = append(out, metricsRead{src: src})
	}
	return out, nil
}

// applyMetrics fills the fleet's utilization from the sources the flags ask
// for, in order (a CSV wins over Prometheus for the machines it has). A source
// that fails entirely becomes a failure (exit 3 after the output) and a
// metrics-failed warning naming the running instances left without any
// utilization; what it could not match becomes notes.
func (in *FleetInputs) applyMetrics(ctx context.Context, m MetricsFlags, lookbackDays int) error {
	reads, err := m.sources(in.Config, lookbackDays)
	if err != nil || len(reads) == 0 {
		return err
	}
	var failed []fleet.ScanWarning
	var errs []error
	for _, r := range reads {
		res, err := r.src.Read(ctx, in.Fleet.Instances, r.window)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		in.Notes = append(in.Notes, res.Notes...)
		if err != nil {
			err = fmt.Errorf("metrics %s: %w", r.src.Name(), trimPrefix(err, r.src.Name()))
			failed = append(failed, fleet.ScanWarning{Code: fleet.ScanMetricsFailed, Source: sourceKind(r.src.Name()), Reason: oneLine(trimPrefix(err, "metrics "+r.src.Name()).Error())})
			errs = append(errs, err)
			continue
		}
		for _, inst := range in.Fleet.Instances {
			if c, ok := res.Coverage[inst.ID]; ok && c.Fraction < 1 {
				in.Notes = append(in.Notes, fmt.Sprintf("%s: utilization from %s covers %s %% of the window", inst.ID, c.Source, trimFloat(c.Fraction*100)))
			}
		}
	}
	if len(failed) > 0 {
		// Whatever a later source or the fleet itself supplied stands; the
		// machines with nothing are the failed sources' to answer for.
		var unknown []string
		for _, inst := range in.Fleet.Instances {
			if inst.Utilization == nil && inst.State != fleet.Stopped {
				unknown = append(unknown, inst.ID)
			}
		}
		for i := range failed {
			failed[i].Instances = unknown
			in.Fleet.Metadata.Warnings = append(in.Fleet.Metadata.Warnings, failed[i])
			in.Failures = append(in.Failures, &ScanFailure{Warning: failed[i], Err: errs[i]})
		}
	}
	return nil
}

// sourceKind is the kind of a metrics source from its name: "nvidia-smi"
// for "nvidia-smi:gpu-1.csv", "prometheus" for "prometheus".
func sourceKind(name string) string {
	kind, _, _ := strings.Cut(name, ":")
	return kind
}

// trimPrefix drops a "name: " prefix the source already put on its error.
func trimPrefix(err error, name string) error {
	if s, ok := strings.CutPrefix(err.Error(), name+": "); ok {
		return fmt.Errorf("%s", s)
	}
	return err
}

func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
}
