package fleet

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func heldFleet() *Fleet {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, 0)
	rate := decimal.RequireFromString("20.8975")
	per := decimal.RequireFromString("12.5")
	return &Fleet{
		APIVersion: APIVersion, Kind: Kind,
		Instances: []Instance{
			{ID: "i-1", Provider: AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Lifecycle: Committed, State: Running,
				Commitment: &Commitment{ID: "ri-1", Kind: HeldStandardRI, Term: "1y"}},
			{ID: "vm-1", Provider: GCP, Region: "europe-west4", InstanceType: "g2-standard-48", Lifecycle: OnDemand, State: Running},
		},
		Commitments: []Held{
			{ID: "ri-1", Provider: AWS, Account: "111", Kind: HeldStandardRI, Scope: HeldScope{Level: "region", Region: "us-east-1"},
				Term: "1y", Payment: "no-upfront", Start: &start, End: &end, InstanceType: "p5.48xlarge", Count: 1, SizeFlexible: true, HourlyRate: &rate, Source: "fleet"},
			{ID: "sp-1", Provider: AWS, Kind: HeldComputeSavingsPlan, Term: "3y", HourlyCommitment: &per},
			{ID: "cud-1", Provider: GCP, Kind: HeldResourceCUD, Term: "1y", Scope: HeldScope{Level: "account", Region: "europe-west4", Accounts: []string{"proj"}},
				Resources: []HeldResource{{Type: "vcpu", Amount: 48}, {Type: "memory", Amount: 192}, {Type: "gpu", GPUModel: "L4", Amount: 4}}},
		},
	}
}

// TestHeldRoundTrip: the commitments section survives writing and reading
// back in both formats and through both decoders, before or after the
// instances, with its decimals written as JSON numbers.
func TestHeldRoundTrip(t *testing.T) {
	f := heldFleet()
	for _, format := range []string{FormatJSON, FormatYAML} {
		b, err := Marshal(f, format)
		if err != nil {
			t.Fatal(err)
		}
		if format == FormatJSON && (!bytes.Contains(b, []byte(`"hourlyRate": 20.8975`)) || !bytes.Contains(b, []byte(`"hourlyCommitment": 12.5`))) {
			t.Errorf("decimals are not JSON numbers:\n%s", b)
		}
		if format == FormatYAML && !bytes.Contains(b, []byte("hourlyCommitment: 12.5")) {
			t.Errorf("YAML decimals are not numbers:\n%s", b)
		}
		name := "fleet." + format
		piece, perr, tree, terr := parseBoth(name, b)
		if perr != nil || terr != nil {
			t.Fatalf("%s: %v / %v\n%s", format, perr, terr, b)
		}
		for _, got := range []*Fleet{piece, tree} {
			if !reflect.DeepEqual(got.Commitments, f.Commitments) {
				t.Errorf("%s: commitments %+v, want %+v", format, got.Commitments, f.Commitments)
			}
			if got.Instances[0].Commitment.ID != "ri-1" {
				t.Errorf("%s: commitment.id lost", format)
			}
		}
		// Encoding an instance at a time gives the same bytes.
		var buf bytes.Buffer
		if err := EncodeSeq(&buf, f, func(yield func(Instance) bool) {
			for _, in := range f.Instances {
				if !yield(in) {
					return
				}
			}
		}, format); err != nil || !bytes.Equal(buf.Bytes(), b) {
			t.Errorf("%s: EncodeSeq differs (%v)", format, err)
		}
		empty := *f
		empty.Instances = nil
		eb, err := Marshal(&empty, format)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Parse(name, eb)
		if err != nil || len(g.Commitments) != 3 || len(g.Instances) != 0 {
			t.Errorf("%s: a fleet of commitments only: %v\n%s", format, err, eb)
		}
	}
	// commitments: before instances: in YAML, the streaming reader's header
	// is what precedes and follows the list.
	y, _ := Marshal(f, FormatYAML)
	head, rest, _ := bytes.Cut(y, []byte("instances:\n"))
	insts, comms, _ := bytes.Cut(rest, []byte("commitments:\n"))
	before := append(append(append(append(bytes.Clone(head), "commitments:\n"...), comms...), "instances:\n"...), insts...)
	piece, perr, tree, terr := parseBoth("f.yaml", before)
	if perr != nil || terr != nil || !reflect.DeepEqual(piece.Commitments, f.Commitments) || !reflect.DeepEqual(tree.Commitments, f.Commitments) {
		t.Errorf("commitments before instances: %v / %v\n%s", perr, terr, before)
	}
	j := []byte(`{"apiVersion":"gpufinops/v1","kind":"Fleet","commitments":[{"id":"sp","provider":"aws","kind":"compute-savings-plan","term":"1y","hourlyCommitment":2.5}],"instances":[]}`)
	sameResult(t, "f.json", j)
	if g, err := Parse("f.json", j); err != nil || g.Commitments[0].HourlyCommitment.String() != "2.5" {
		t.Errorf("JSON commitments first: %v", err)
	}
}

func TestHeldValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(f *Fleet)
		want string
	}{
		{"term", func(f *Fleet) { f.Commitments[2].Term = "2y" }, `commitments[2].term: "2y" is not one of 1y, 3y, 5y`},
		{"term missing", func(f *Fleet) { f.Commitments[1].Term = "" }, `commitments[1].term: missing`},
		{"kind of another cloud", func(f *Fleet) { f.Commitments[0].Kind = HeldResourceCUD }, `commitments[0].kind: "resource-cud" is not a aws commitment`},
		{"provider", func(f *Fleet) { f.Commitments[1].Provider = "oracle" }, `commitments[1].provider: "oracle" is not one of`},
		{"duplicate id", func(f *Fleet) { f.Commitments[1].ID = "ri-1" }, `commitments[1].id: "ri-1" is already the id of commitments[0]`},
		{"no id", func(f *Fleet) { f.Commitments[1].ID = " " }, `commitments[1].id: missing`},
		{"end before start", func(f *Fleet) { f.Commitments[0].End = f.Commitments[0].Start }, `commitments[0].end: 2026-01-01T00:00:00Z is not after start`},
		{"NaN count", func(f *Fleet) { f.Commitments[0].Count = nan() }, `commitments[0].count: NaN is not a finite number`},
		{"absurd count", func(f *Fleet) { f.Commitments[0].Count = 1e9 }, `commitments[0].count: 1000000000 is above the limit`},
		{"no count", func(f *Fleet) { f.Commitments[0].Count = 0 }, `commitments[0].count: missing`},
		{"no type", func(f *Fleet) { f.Commitments[0].InstanceType = "" }, `commitments[0].instanceType: missing`},
		{"negative rate", func(f *Fleet) { d := decimal.NewFromInt(-1); f.Commitments[0].HourlyRate = &d }, `commitments[0].hourlyRate: -1 is negative`},
		{"absurd commitment", func(f *Fleet) { d := decimal.New(1, 400); f.Commitments[1].HourlyCommitment = &d }, `commitments[1].hourlyCommitment: 1e400 is above`},
		{"no hourly commitment", func(f *Fleet) { f.Commitments[1].HourlyCommitment = nil }, `commitments[1].hourlyCommitment: missing`},
		{"EC2 SP without family", func(f *Fleet) { f.Commitments[1].Kind = HeldEC2SavingsPlan }, `commitments[1].instanceFamily: missing`},
		{"resource type", func(f *Fleet) { f.Commitments[2].Resources[0].Type = "cpu" }, `commitments[2].resources[0].type: "cpu" is not one of vcpu, memory, gpu, local-ssd`},
		{"gpu model", func(f *Fleet) { f.Commitments[2].Resources[2].GPUModel = "" }, `commitments[2].resources[2].gpuModel: missing`},
		{"Inf amount", func(f *Fleet) { f.Commitments[2].Resources[1].Amount = inf() }, `commitments[2].resources[1].amount: +Inf is not a finite number`},
		{"zero amount", func(f *Fleet) { f.Commitments[2].Resources[1].Amount = 0 }, `commitments[2].resources[1].amount: 0 is not a positive amount`},
		{"CUD region", func(f *Fleet) { f.Commitments[2].Scope.Region = "" }, `commitments[2].scope.region: missing`},
		{"scope level", func(f *Fleet) { f.Commitments[0].Scope.Level = "planet" }, `commitments[0].scope.level: "planet" is not one of`},
		{"zone", func(f *Fleet) { f.Commitments[0].Scope.Level = "zone" }, `commitments[0].scope.zone: missing`},
		{"dangling reference", func(f *Fleet) { f.Instances[0].Commitment.ID = "ri-9" }, `instances[0] (id "i-1"): commitment.id: "ri-9" names no commitment`},
		{"reference across clouds", func(f *Fleet) {
			f.Instances[1].Lifecycle = Committed
			f.Instances[1].Commitment = &Commitment{ID: "ri-1"}
		}, `instances[1] (id "vm-1"): commitment.id: "ri-1" is a aws commitment, the instance is on gcp`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := heldFleet()
			if err := f.Validate(); err != nil {
				t.Fatalf("valid fleet refused: %v", err)
			}
			tc.edit(f)
			err := f.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestHeldActive: a commitment is paid from its start until its end.
func TestHeldActive(t *testing.T) {
	h := heldFleet().Commitments[0]
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{h.Start.Add(-time.Second), false}, {*h.Start, true}, {h.End.Add(-time.Second), true}, {*h.End, false},
	} {
		if got := h.Active(tc.at); got != tc.want {
			t.Errorf("Active(%s) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

func nan() float64 { return math.NaN() }

func inf() float64 { return math.Inf(1) }
