package simkit

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Sim is a simulator built for cmd/cloudsim: a handler for its cloud's
// requests plus what the control endpoints need.
type Sim interface {
	http.Handler
	Backend
	// Claims reports whether a request (with its body read) is this
	// simulator's; Mux asks it only when it mounts several simulators.
	Claims(r *http.Request, body []byte) bool
	// Notes are lines cmd/cloudsim prints after starting, e.g. which
	// account plain credentials act in.
	Notes() []string
}

// Env is what cmd/cloudsim gives every simulator it builds.
type Env struct {
	// Kit is the shared fault middleware and counters; the simulator serves
	// its requests through it.
	Kit *Kit
	// Now is the clock; nil is the wall clock.
	Now func() time.Time
}

// Simulator is a registered simulator.
type Simulator struct {
	// Name is the cloud ("aws"); Title how messages call it ("AWS").
	Name, Title string
	// Provider is the fleet's provider the simulator serves.
	Provider fleet.Provider
	// EndpointEnv is the environment variable that points the cloud's
	// tools at an endpoint, e.g. AWS_ENDPOINT_URL.
	EndpointEnv string
	// Flags adds the simulator's own flags to cmd/cloudsim's and returns a
	// check run after parsing (nil: none), whose error is a usage error.
	Flags func(fs *flag.FlagSet) (check func() error)
	// ProxyHosts are public hosts a client cannot be pointed away from
	// (Azure CLI's login.microsoftonline.com): cloudsim --tls serves them
	// through itself as an HTTPS proxy (simkit.ConnectProxy).
	ProxyHosts []string
	// Ops are the operations the simulator answers, as "service:Op"
	// ("ec2:StopInstances"): the names --delay and --hang may use.
	Ops []string
	// Build makes the simulator of a fleet (already completed from the
	// catalog); an error is invalid input.
	Build func(f *fleet.Fleet, env Env) (Sim, error)
}

var (
	regMu    sync.Mutex
	registry = map[string]Simulator{}
)

// Register adds a simulator; simulators register in init. It panics on a
// duplicate or incomplete registration (a programming error).
func Register(s Simulator) {
	regMu.Lock()
	defer regMu.Unlock()
	if s.Name == "" || s.Build == nil {
		panic("simkit.Register: a simulator needs a Name and Build")
	}
	if _, dup := registry[s.Name]; dup {
		panic("simkit.Register: " + s.Name + " registered twice")
	}
	registry[s.Name] = s
}

// Registered returns the registered simulators by name.
func Registered() []Simulator {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Simulator, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RegisteredOps are the operations of every registered simulator, then
// extra: the Options.Ops of a kit they share.
func RegisteredOps(extra ...string) []string {
	ops := append([]string(nil), extra...)
	for _, s := range Registered() {
		ops = append(ops, s.Ops...)
	}
	return ops
}

// Mux serves several simulators on one port: the control endpoints for all
// of them (Kit.Control), and every other request to the first simulator
// that claims it (with one simulator, to that one).
func Mux(kit *Kit, sims ...Sim) http.Handler {
	backends := make([]Backend, len(sims))
	for i, s := range sims {
		backends[i] = s
	}
	control := kit.Control(backends...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsControl(r) {
			control.ServeHTTP(w, r)
			return
		}
		if len(sims) == 1 {
			sims[0].ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, s := range sims {
			if s.Claims(r, body) {
				r.Body = io.NopCloser(bytes.NewReader(body))
				s.ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, fmt.Sprintf("gpufinops cloudsim: no simulator recognises %s %s", r.Method, r.URL.Path), http.StatusBadRequest)
	})
}
