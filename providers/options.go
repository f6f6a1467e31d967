package providers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pricing"
)

// Option is one setting of an adapter: its config key under
// providers.<cloud>.<Name> (environment GPUFINOPS_PROVIDERS_<CLOUD>_<NAME>),
// and optionally the flag that sets it on the commands that scan.
type Option struct {
	// Name is the key under providers.<cloud>, in snake_case, e.g. "role_arns".
	Name string
	// Help says what the option does, in one line (flag and docs help).
	Help string
	// Default is the value when nothing sets it. Its type is the option's:
	// string, []string, int, bool or time.Duration.
	Default any
	// Flag is the command-line flag that sets it (without dashes); empty for
	// an option set in the configuration only. A flag wins over the
	// configuration.
	Flag string
	// Validate checks a decoded value; nil accepts every value of the type.
	Validate func(v any) error
}

// Kind names the option's type: string, strings, int, bool or duration.
func (o Option) Kind() string {
	switch o.Default.(type) {
	case string:
		return "string"
	case []string:
		return "strings"
	case int:
		return "int"
	case bool:
		return "bool"
	case time.Duration:
		return "duration"
	}
	return fmt.Sprintf("%T", o.Default)
}

// ConfigKey is the option's key in the configuration of a cloud.
func (o Option) ConfigKey(cloud string) string { return "providers." + cloud + "." + o.Name }

// The options every adapter has, read by the factory into Options.Endpoint,
// Options.Regions and Options.Concurrency.
const (
	OptEndpoint    = "endpoint"
	OptRegions     = "regions"
	OptConcurrency = "concurrency"
)

// MaxConcurrency bounds providers.<cloud>.concurrency.
const MaxConcurrency = 64

// CommonOptions are the options of every adapter, before its own. --region
// is shared by every cloud, so its flag is added once by the scan commands.
func CommonOptions() []Option {
	return []Option{
		{Name: OptEndpoint, Help: "send every call to one URL (a simulator such as cmd/cloudsim)", Default: ""},
		{Name: OptRegions, Help: "regions to scan (default: every enabled region)", Default: []string{}},
		{Name: OptConcurrency, Help: "scopes scanned at once", Default: 8, Validate: func(v any) error {
			if n := v.(int); n < 1 || n > MaxConcurrency {
				return fmt.Errorf("%d is outside 1–%d", n, MaxConcurrency)
			}
			return nil
		}},
	}
}

// Values are option values by name.
type Values map[string]any

// String is the value of a string option, "" when unset.
func (v Values) String(name string) string { s, _ := v[name].(string); return s }

// Strings is the value of a list option, nil when unset.
func (v Values) Strings(name string) []string { s, _ := v[name].([]string); return s }

// Int is the value of an int option, 0 when unset.
func (v Values) Int(name string) int { n, _ := v[name].(int); return n }

// Bool is the value of a bool option, false when unset.
func (v Values) Bool(name string) bool { b, _ := v[name].(bool); return b }

// Duration is the value of a duration option, 0 when unset.
func (v Values) Duration(name string) time.Duration { d, _ := v[name].(time.Duration); return d }

// Permission is one cloud permission an adapter needs, and why.
type Permission struct {
	Action  string
	Purpose string
}

// Policy is an adapter's least-privilege policy: the permissions it needs
// to analyse and, for idle-stop, to stop instances, and the documents that
// grant them.
type Policy struct {
	// Kind names the document, e.g. "IAM policy".
	Kind string
	// Analyze is what inventory, metrics and prices need: read-only.
	Analyze []Permission
	// IdleStop is what idle-stop adds.
	IdleStop []Permission
	// Extra are permissions granted elsewhere (e.g. on the caller, to
	// assume roles); documentation only.
	Extra []Permission
	// Document returns the policy document, read-only or with IdleStop.
	Document func(idleStop bool) ([]byte, error)
	// Notes are printed by `iam-policy --help`, e.g. how to attach it.
	Notes string
}

// Permissions are the permissions of the document for idleStop.
func (p *Policy) Permissions(idleStop bool) []Permission {
	if !idleStop {
		return p.Analyze
	}
	return slices.Concat(p.Analyze, p.IdleStop)
}

// DoctorInfo is what `gpufinops doctor` says about an adapter outside its
// checks.
type DoctorInfo struct {
	// Default is set when doctor checks the cloud without --provider.
	Default bool
	// CredentialsFix says how to configure credentials when there are none.
	CredentialsFix string
	// Checks says, for the help, what doctor checks on the cloud and how.
	Checks string
}

// Purchase names how a cloud sells commitments: the kind and payment the
// commitment advice buys by default, and what the advice calls it. They are
// the defaults of policy.commitment.plans, .payments and .names.
type Purchase struct {
	Plan    pricing.CommitmentKind
	Payment string
	Name    string
}

// Lookback is how far back an adapter can read utilization.
type Lookback struct {
	// MaxDays is the longest lookback, in days; 0 means no limit of its own.
	MaxDays int
	// Why says where the limit comes from, for the error.
	Why string
}

// Option returns the adapter's option of that name, common ones included.
func (ri *RegInfo) Option(name string) (Option, bool) {
	for _, o := range ri.AllOptions() {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// AllOptions are the common options followed by the adapter's own.
func (ri *RegInfo) AllOptions() []Option {
	return slices.Concat(CommonOptions(), ri.Options)
}

// Defaults are the adapter's option values when nothing sets them.
func (ri *RegInfo) Defaults() Values {
	out := Values{}
	for _, o := range ri.AllOptions() {
		if s, ok := o.Default.([]string); ok {
			out[o.Name] = slices.Clone(s)
			continue
		}
		out[o.Name] = o.Default
	}
	return out
}

// CanScan reports whether the build has the cloud's adapter, not only its
// data (owner rules, purchase names).
func (ri *RegInfo) CanScan() bool { return ri.New != nil }

// ValidateOptions checks each value against its option: the type and the
// option's own Validate. Errors name the key (providers.<cloud>.<name>).
func (ri *RegInfo) ValidateOptions(v Values) error {
	for _, o := range ri.AllOptions() {
		val, ok := v[o.Name]
		if !ok {
			continue
		}
		if fmt.Sprintf("%T", val) != fmt.Sprintf("%T", o.Default) {
			return fmt.Errorf("%s: %v is not a %s", o.ConfigKey(string(ri.Name)), val, o.Kind())
		}
		if o.Validate != nil {
			if err := o.Validate(val); err != nil {
				return fmt.Errorf("%s: %w", o.ConfigKey(string(ri.Name)), err)
			}
		}
	}
	return nil
}

// checkOptions refuses a registration whose options collide or have no type.
func (ri *RegInfo) checkOptions() error {
	seen := map[string]bool{}
	for _, o := range ri.AllOptions() {
		if o.Name == "" || o.Name != strings.ToLower(o.Name) || strings.ContainsAny(o.Name, ".- ") {
			return fmt.Errorf("option %q: want a snake_case name", o.Name)
		}
		if seen[o.Name] {
			return fmt.Errorf("option %q declared twice", o.Name)
		}
		seen[o.Name] = true
		switch o.Default.(type) {
		case string, []string, int, bool, time.Duration:
		default:
			return fmt.Errorf("option %q: default of type %T; want string, []string, int, bool or time.Duration", o.Name, o.Default)
		}
	}
	return nil
}

// Registered lists the registered clouds in name order.
func Registered() []*RegInfo {
	var out []*RegInfo
	for _, n := range Names() {
		ri, _ := Find(n)
		out = append(out, ri)
	}
	return out
}

// Scannable lists the names of the registered clouds that have an adapter.
func Scannable() []string {
	var out []string
	for _, ri := range Registered() {
		if ri.CanScan() {
			out = append(out, string(ri.Name))
		}
	}
	return out
}

// Flags are the adapter flags of every registered cloud, each once, with the
// clouds that read it. Two clouds may share a flag only with the same type.
func Flags() ([]Flag, error) { return flagsOf(Registered()) }

func flagsOf(clouds []*RegInfo) ([]Flag, error) {
	var out []Flag
	idx := map[string]int{}
	for _, ri := range clouds {
		for _, o := range ri.Options {
			if o.Flag == "" {
				continue
			}
			if i, ok := idx[o.Flag]; ok {
				if out[i].Kind() != o.Kind() {
					return nil, fmt.Errorf("--%s: %s reads a %s, %s a %s", o.Flag, out[i].Clouds[0], out[i].Kind(), ri.Name, o.Kind())
				}
				out[i].Clouds = append(out[i].Clouds, string(ri.Name))
				continue
			}
			idx[o.Flag] = len(out)
			out = append(out, Flag{Option: o, Clouds: []string{string(ri.Name)}})
		}
	}
	return out, nil
}

// Flag is an adapter flag and the clouds whose option it sets.
type Flag struct {
	Option
	Clouds []string
}

// PurchaseDefaults are the registered clouds' commitment kinds, payments
// and names, keyed by cloud, for the policy's defaults.
func PurchaseDefaults() (plans, payments, names map[string]string) {
	return PurchasesOf(Registered())
}

// PurchasesOf is what clouds call their commitments: the plan kind, payment
// option and name of each cloud that registers a Purchase, keyed by cloud.
func PurchasesOf(clouds []*RegInfo) (plans, payments, names map[string]string) {
	plans, payments, names = map[string]string{}, map[string]string{}, map[string]string{}
	for _, ri := range clouds {
		if ri.Purchase == nil {
			continue
		}
		c := string(ri.Name)
		if ri.Purchase.Plan != "" {
			plans[c] = string(ri.Purchase.Plan)
		}
		if ri.Purchase.Payment != "" {
			payments[c] = ri.Purchase.Payment
		}
		if ri.Purchase.Name != "" {
			names[c] = ri.Purchase.Name
		}
	}
	return plans, payments, names
}
