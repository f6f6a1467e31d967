package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
)

var now = time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC)

// testCatalog has two AWS types in two regions and one Azure type.
func testCatalog() *pricingtest.Catalog {
	g5 := pricing.InstanceType{Provider: fleet.AWS, Name: "g5.xlarge", GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 4, MemoryGiB: 16}
	p5 := pricing.InstanceType{Provider: fleet.AWS, Name: "p5.48xlarge", GPUModel: "H100", GPUCount: 8, GPUMemoryGiB: 80, VCPUs: 192, MemoryGiB: 2048}
	nc := pricing.InstanceType{Provider: fleet.Azure, Name: "Standard_NC24ads_A100_v4", GPUModel: "A100-80GB", GPUCount: 1, GPUMemoryGiB: 80, VCPUs: 24, MemoryGiB: 220}
	c := &pricingtest.Catalog{}
	c.AddOffer(g5, "us-east-1", "1.006", "0.4").AddOffer(p5, "us-east-1", "55.04", "").AddOffer(g5, "eu-west-1", "1.123", "")
	c.AddOffer(nc, "eastus", "3.673", "1.1")
	return c
}

func livePrice(p fleet.Provider, region, typ string, opt pricing.Option, hourly string) pricing.Price {
	return pricing.Price{Provider: p, Region: region, InstanceType: typ, Option: opt, Hourly: decimal.RequireFromString(hourly),
		Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "fake price API", AsOf: now.Format(time.DateOnly)}
}

// env is a factory over fake adapters whose price readers serve prices,
// with the overlay in a temporary cache folder.
type env struct {
	prices  []pricing.Price
	faults  map[fleet.Provider]map[string]fake.Fault
	noCreds map[fleet.Provider]bool
	asked   []cmdutil.FleetFlags
	path    string
	cat     pricing.Catalog
}

func newEnv(t *testing.T) *env {
	return &env{path: cache.OverlayPath(t.TempDir()), cat: testCatalog(), faults: map[fleet.Provider]map[string]fake.Fault{}, noCreds: map[fleet.Provider]bool{}}
}

func (e *env) factory() (*cmdutil.Factory, *iostreams.IOStreams) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{
		IOStreams:       ios,
		Config:          func() (*config.Config, error) { return &config.Config{}, nil },
		EmbeddedCatalog: func() (pricing.Catalog, error) { return e.cat, nil },
		OverlayPath:     func() (string, error) { return e.path, nil },
		Now:             func() time.Time { return now },
		Providers: func(_ context.Context, in cmdutil.FleetFlags, _ *config.Config) ([]providers.Provider, error) {
			e.asked = append(e.asked, in)
			cloud := fleet.Provider(in.Providers[0])
			return []providers.Provider{fake.New(&fleet.Fleet{}, fake.Options{
				Cloud: cloud, Regions: in.Regions, Prices: e.prices, Faults: e.faults[cloud], NoCredentials: e.noCreds[cloud],
				Now: func() time.Time { return now },
			})}, nil
		},
	}
	return f, ios
}

func (e *env) run(t *testing.T, args ...string) (cmdutil.ExitCode, string, string) {
	t.Helper()
	f, ios := e.factory()
	cmd := NewCmdCatalog(f)
	cmd.SetArgs(args)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	err := cmd.ExecuteContext(context.Background())
	out, errOut := ios.Out.(interface{ String() string }).String(), ios.ErrOut.(interface{ String() string }).String()
	if err != nil {
		errOut += "error: " + err.Error() + "\n"
	}
	return cmdutil.ExitCodeFor(err), out, errOut
}

func (e *env) overlay(t *testing.T) *cache.Overlay {
	t.Helper()
	o, err := cache.ReadOverlay(e.path)
	if err != nil || o == nil {
		t.Fatalf("reading the overlay: %v, %v", o, err)
	}
	return o
}

func TestUpdateFetchesEveryCatalogRegionAndType(t *testing.T) {
	e := newEnv(t)
	e.prices = []pricing.Price{
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.006"),
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.Spot, "0.39"),
		livePrice(fleet.AWS, "us-east-1", "p5.48xlarge", pricing.OnDemand, "60.5"),
		livePrice(fleet.AWS, "us-east-1", "p5.48xlarge", pricing.SavingsPlan1y, "40"),
		livePrice(fleet.AWS, "eu-west-1", "g5.xlarge", pricing.OnDemand, "1.123"),
		// Not asked: another region, another type.
		livePrice(fleet.AWS, "us-west-2", "g5.xlarge", pricing.OnDemand, "1"),
		livePrice(fleet.AWS, "us-east-1", "g6.xlarge", pricing.OnDemand, "0.8"),
		livePrice(fleet.Azure, "eastus", "Standard_NC24ads_A100_v4", pricing.OnDemand, "3.673"),
	}
	code, out, errOut := e.run(t, "update", "--provider", "aws,azure")
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"aws: 2 of 2 regions read, 2 types priced, 5 prices (on-demand 3, spot 1, savings-plan-1y 1, savings-plan-3y 0)",
		"azure: 1 of 1 region read, 1 type priced, 1 price (on-demand 1, spot 0",
		"wrote " + e.path + " (2026-12-06, 6 prices in all)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The adapters were asked for the catalog's regions, bypassing the price cache.
	for _, in := range e.asked {
		if !in.NoPriceCache {
			t.Errorf("%v read through the price cache", in.Providers)
		}
		if in.Providers[0] == "aws" && strings.Join(in.Regions, ",") != "eu-west-1,us-east-1" {
			t.Errorf("aws regions %v", in.Regions)
		}
	}
	o := e.overlay(t)
	if len(o.Prices) != 6 || len(o.Fetches) != 3 || !o.UpdatedAt.Equal(now) {
		t.Fatalf("overlay: %d prices, %d fetches, updated %v", len(o.Prices), len(o.Fetches), o.UpdatedAt)
	}
	// Idempotent: the same update again writes the same bytes.
	first, _ := os.ReadFile(e.path)
	if code, _, errOut := e.run(t, "update", "--provider", "aws,azure"); code != 0 {
		t.Fatal(errOut)
	}
	if again, _ := os.ReadFile(e.path); string(again) != string(first) {
		t.Fatal("the same update twice wrote different files")
	}
}

func TestUpdateNarrowsAndAddsTypes(t *testing.T) {
	e := newEnv(t)
	e.prices = []pricing.Price{
		livePrice(fleet.AWS, "us-east-1", "g6.xlarge", pricing.OnDemand, "0.8"),
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.1"),
		livePrice(fleet.AWS, "ap-south-1", "g5.xlarge", pricing.OnDemand, "1.3"),
	}
	code, out, errOut := e.run(t, "update", "--provider", "AWS", "--region", "US-EAST-1,ap-south-1", "--type", "g6.xlarge,g5.xlarge")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var got []string
	for _, p := range e.overlay(t).Prices {
		got = append(got, p.Region+"/"+p.InstanceType)
	}
	if strings.Join(got, " ") != "ap-south-1/g5.xlarge us-east-1/g5.xlarge us-east-1/g6.xlarge" {
		t.Fatalf("overlay holds %v", got)
	}
	// A type asked for that has no price is a note, not a failure.
	if !strings.Contains(errOut, "note: aws ap-south-1: 1 type of 2 asked for had no price") {
		t.Errorf("no note of the unpriced type:\n%s", errOut)
	}
	// The new type and region show in the status.
	code, out, _ = e.run(t, "status", "-o", "json")
	if code != 0 {
		t.Fatal(out)
	}
	var doc Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	aws := doc.Clouds[0]
	if aws.Source != SourceOverlay || aws.Overlay == nil || strings.Join(aws.Overlay.NewTypes, ",") != "g6.xlarge" ||
		strings.Join(aws.Overlay.NewRegions, ",") != "ap-south-1" || aws.Overlay.ChangedPrices != 1 || aws.Overlay.NewOffers != 2 {
		t.Fatalf("aws status %+v %+v", aws, aws.Overlay)
	}
}

func TestUpdatePartialFailureKeepsOldPricesAndExits3(t *testing.T) {
	e := newEnv(t)
	e.prices = []pricing.Price{
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.0"),
		livePrice(fleet.AWS, "eu-west-1", "g5.xlarge", pricing.OnDemand, "1.1"),
	}
	if code, _, errOut := e.run(t, "update", "--provider", "aws"); code != 0 {
		t.Fatal(errOut)
	}
	// eu-west-1's price API fails, us-east-1's price moves.
	e.prices[0].Hourly = decimal.RequireFromString("0.9")
	e.faults[fleet.AWS] = map[string]fake.Fault{"eu-west-1": {Prices: errors.New("HTTP 503")}}
	code, out, errOut := e.run(t, "update", "--provider", "aws")
	if code != cmdutil.ExitPartial {
		t.Fatalf("exit %d, want 3\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning: aws eu-west-1: live prices: HTTP 503") {
		t.Errorf("no warning naming the region:\n%s", errOut)
	}
	var got []string
	for _, p := range e.overlay(t).Prices {
		got = append(got, p.Region+"="+p.Hourly.String())
	}
	if strings.Join(got, " ") != "eu-west-1=1.1 us-east-1=0.9" {
		t.Fatalf("overlay %v: eu-west-1 must keep its older price, us-east-1 take the new one", got)
	}
}

func TestUpdateNothingReadIsAnError(t *testing.T) {
	e := newEnv(t)
	e.noCreds[fleet.AWS] = true
	code, _, errOut := e.run(t, "update", "--provider", "aws")
	if code != cmdutil.ExitCredentials || !strings.Contains(errOut, "no prices fetched") {
		t.Fatalf("exit %d, want 4:\n%s", code, errOut)
	}
	if _, err := os.Stat(e.path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a failed update wrote the overlay")
	}
}

func TestUpdateReplacesACorruptOverlay(t *testing.T) {
	e := newEnv(t)
	e.prices = []pricing.Price{livePrice(fleet.Azure, "eastus", "Standard_NC24ads_A100_v4", pricing.OnDemand, "3.5")}
	if err := os.MkdirAll(filepath.Dir(e.path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// status refuses it with exit 2, naming the file.
	code, _, errOut := e.run(t, "status")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "catalog overlay "+e.path+": not an overlay file") {
		t.Fatalf("status of a corrupt overlay: exit %d\n%s", code, errOut)
	}
	code, _, errOut = e.run(t, "update", "--provider", "azure")
	if code != 0 || !strings.Contains(errOut, "it is replaced") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if len(e.overlay(t).Prices) != 1 {
		t.Fatal("the overlay was not rewritten")
	}
	// A file named with --file that is no overlay is not overwritten,
	// unless --replace says so.
	other := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(other, []byte(`{"kind":"Report"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = e.run(t, "update", "--provider", "azure", "--file", other)
	if b, _ := os.ReadFile(other); code != cmdutil.ExitUsage || string(b) != `{"kind":"Report"}` || !strings.Contains(errOut, "not overwritten") {
		t.Fatalf("--file of another document: exit %d, file %s\n%s", code, b, errOut)
	}
	if code, _, errOut = e.run(t, "update", "--provider", "azure", "--file", other, "--replace"); code != 0 {
		t.Fatalf("--replace: exit %d\n%s", code, errOut)
	}
}

func TestUpdateFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--provider", "oracle"}, `invalid --provider "oracle"`},
		{[]string{"--region", "us east"}, `invalid --region or --type "us east"`},
		{[]string{"--type", "g5.xlarge,a\tb"}, `invalid --region or --type "a\tb"`},
		{[]string{"extra"}, "unknown command"},
	} {
		_, err := cmdtest.Parse(t, NewCmdUpdate, c.args)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.wantErr)
		}
	}
	o, err := cmdtest.Parse(t, NewCmdUpdate, []string{"--provider", "gcp", "--file", "snap.json", "--replace"})
	if err != nil || o.Output != "snap.json" || !o.Replace || o.Scope.Providers[0] != "gcp" {
		t.Fatalf("%+v, %v", o, err)
	}
}

func TestStatusTableAndJSON(t *testing.T) {
	e := newEnv(t)
	// Before any update: the embedded snapshot only.
	code, out, errOut := e.run(t, "status")
	if code != 0 {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, "aws\tembedded\t2026-11-30\t6\t2\t2\t3\t3\t1\t0\t0\t-") || strings.Contains(out, "overlay") || !strings.Contains(errOut, "No overlay yet") {
		t.Fatalf("status without an overlay:\n%s%s", out, errOut)
	}
	e.prices = []pricing.Price{
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.006"),
		livePrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.Spot, "0.5"),
		livePrice(fleet.AWS, "us-east-1", "p5.48xlarge", pricing.SavingsPlan3y, "30"),
	}
	if code, _, errOut := e.run(t, "update", "--provider", "aws", "--region", "us-east-1"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ = e.run(t, "status", "--provider", "aws", "-o", "json")
	if code != 0 {
		t.Fatal(out)
	}
	var doc Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != Kind || doc.SchemaVersion != SchemaVersion || !doc.Overlay.Present || doc.Overlay.Path != e.path || len(doc.Clouds) != 1 {
		t.Fatalf("document %+v", doc)
	}
	c := doc.Clouds[0]
	emb, ov := c.Embedded, c.Overlay
	if emb.Regions != 2 || emb.Types != 2 || emb.Offers != 3 || emb.OnDemand != 3 || emb.Spot != 1 {
		t.Errorf("embedded coverage %+v", emb)
	}
	if ov == nil || ov.Regions != 1 || ov.Types != 2 || ov.Offers != 2 || ov.OnDemand != 1 || ov.Spot != 1 || ov.Commitments != 1 ||
		ov.ChangedPrices != 1 || ov.RegionsRead != 1 || ov.AsOf != "2026-12-06" || ov.AgeDays == nil || *ov.AgeDays != 0 || len(ov.NewTypes) != 0 {
		t.Errorf("overlay coverage %+v", ov)
	}
	code, out, errOut = e.run(t, "status")
	if code != 0 {
		t.Fatal(errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || lines[1] != "aws\toverlay\t2026-12-06\t0\t1\t2\t2\t1\t1\t1\t1\t-" || !strings.HasPrefix(lines[2], "aws\tembedded") {
		t.Fatalf("table, overlay first:\n%s", out)
	}
	if !strings.Contains(errOut, "Overlay: "+e.path+"\nUpdated 2026-12-06T09:30:00Z.") {
		t.Errorf("no overlay line:\n%s", errOut)
	}
}

// TestUpdateConnectTimeout: --connect-timeout reaches the adapters whose
// price readers fetch, over timeouts.connect, and a value out of range is
// exit 2 before any cloud is called.
func TestUpdateConnectTimeout(t *testing.T) {
	e := newEnv(t)
	var got []time.Duration
	run := func(args ...string) (cmdutil.ExitCode, string) {
		f, ios := e.factory()
		f.Config = func() (*config.Config, error) {
			return &config.Config{Timeouts: config.TimeoutsConfig{Connect: 9 * time.Second}}, nil
		}
		inner := f.Providers
		f.Providers = func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error) {
			got = append(got, cfg.Timeouts.Connect)
			return inner(ctx, in, cfg)
		}
		cmd := NewCmdCatalog(f)
		cmd.SetArgs(append([]string{"update", "--provider", "aws", "--region", "us-east-1"}, args...))
		cmd.SetOut(ios.Out)
		cmd.SetErr(ios.ErrOut)
		err := cmd.ExecuteContext(context.Background())
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		return cmdutil.ExitCodeFor(err), msg
	}
	run("--connect-timeout", "1500ms")
	run()
	if len(got) != 2 || got[0] != 1500*time.Millisecond || got[1] != 9*time.Second {
		t.Errorf("the adapters got connect timeouts %v, want [1.5s 9s]", got)
	}
	for _, v := range []string{"0s", "-1s", "11m"} {
		got = nil
		code, msg := run("--connect-timeout", v)
		if code != cmdutil.ExitUsage || !strings.Contains(msg, "connect-timeout") || len(got) != 0 {
			t.Errorf("--connect-timeout %s: %q (exit %d), %d builds", v, msg, code, len(got))
		}
	}
}

// A live price of a type a managed AI service sells (SageMaker's ml.*) is
// not a new type when the catalog already prices that type: the status
// looks it up under its service, not among the virtual machines.
func TestOverlayCoverageManagedTypes(t *testing.T) {
	c := testCatalog()
	ml := pricing.InstanceType{Provider: fleet.AWS, Name: "ml.g5.xlarge", GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24,
		VCPUs: 4, MemoryGiB: 16, Service: fleet.SageMaker}
	c.AddOffer(ml, "us-east-1", "1.4084", "")
	mlNew := ml
	mlNew.Name = "ml.g6.xlarge"
	c.AddOffer(mlNew, "ap-south-1", "1.353", "")
	ov := &cache.Overlay{Prices: []pricing.Price{
		livePrice(fleet.AWS, "us-east-1", "ml.g5.xlarge", pricing.OnDemand, "1.408"),
		livePrice(fleet.AWS, "us-east-1", "ml.g6.xlarge", pricing.OnDemand, "1.127"),
		livePrice(fleet.AWS, "us-east-1", "ml.p5.48xlarge", pricing.OnDemand, "63.296"),
	}}
	cv := overlayCoverage(c, ov, fleet.AWS, now)
	if cv == nil || strings.Join(cv.NewTypes, ",") != "ml.p5.48xlarge" || cv.ChangedPrices != 1 {
		t.Fatalf("coverage %+v, want only ml.p5.48xlarge new and one changed price", cv)
	}
}
