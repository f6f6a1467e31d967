package simkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// InstanceState is one instance's state as /_sim/state reports it.
type InstanceState struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	State    string `json:"state"`
}

// ErrNoInstance is the error of an operation on an instance a simulator
// does not serve; /_sim/load answers it with 404.
var ErrNoInstance = errors.New("no such instance")

// Backend is what the control endpoints need of a simulator.
type Backend interface {
	// State returns every instance's live state, in fleet order.
	State() []InstanceState
	// SetLoad sets every GPU of an instance to gpuPercent from the
	// simulator's now on; ErrNoInstance when it serves no such instance.
	SetLoad(id string, gpuPercent float64) error
	// Now is the simulator's clock.
	Now() time.Time
}

// IsControl reports whether a request is for the control endpoints: any
// GET under /_sim/, and /_sim/load and /_sim/faults with any method.
func IsControl(r *http.Request) bool {
	return (r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/_sim/")) || r.URL.Path == "/_sim/load" || r.URL.Path == "/_sim/faults"
}

// Control serves the control endpoints of simulators that share a kit:
//
//	GET /_sim/state         {"instances": [{"provider", "id", "state"}, …]}
//	GET /_sim/requests      service → operation → count
//	POST /_sim/load         {"id": "…", "gpu": 85}: see Backend.SetLoad
//	GET|POST /_sim/faults   the per-operation faults (see Faults)
//
// Every backend's instances are listed, in the order given; a load goes to
// the backend that serves the instance.
func (k *Kit) Control(backends ...Backend) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		switch r.URL.Path {
		case "/_sim/state":
			all := []InstanceState{}
			for _, b := range backends {
				all = append(all, b.State()...)
			}
			_ = enc.Encode(map[string]any{"instances": all})
		case "/_sim/requests":
			_ = enc.Encode(k.Counts())
		case "/_sim/load":
			serveLoad(w, r, backends)
		case "/_sim/faults":
			k.serveFaults(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// serveLoad answers POST /_sim/load {"id": "…", "gpu": 85}.
func serveLoad(w http.ResponseWriter, r *http.Request, backends []Backend) {
	fail := func(status int, msg string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, `POST /_sim/load {"id": "i-…", "gpu": 85}`)
		return
	}
	var body struct {
		ID  string   `json:"id"`
		GPU *float64 `json:"gpu"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		fail(http.StatusBadRequest, `the body is not {"id": "i-…", "gpu": 85}: `+err.Error())
		return
	}
	if body.ID == "" || body.GPU == nil {
		fail(http.StatusBadRequest, "the body needs both id and gpu")
		return
	}
	err := fmt.Errorf("%w: %s", ErrNoInstance, body.ID)
	for _, b := range backends {
		if err = b.SetLoad(body.ID, *body.GPU); !errors.Is(err, ErrNoInstance) {
			if err == nil {
				_ = json.NewEncoder(w).Encode(map[string]any{"id": body.ID, "gpu": *body.GPU, "from": b.Now().UTC().Truncate(time.Minute)})
				return
			}
			break
		}
	}
	status := http.StatusBadRequest
	if errors.Is(err, ErrNoInstance) {
		status = http.StatusNotFound
	}
	fail(status, err.Error())
}
