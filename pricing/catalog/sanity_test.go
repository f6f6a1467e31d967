package catalog

// Build-time checks that the embedded data is sane: they run with every
// `go test` of this package, so a data refresh that breaks one fails CI.

import (
	"encoding/csv"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// TestEveryGPUHasSpecs: every accelerator an offer names has a spec with a
// vendor, and every type but the FPGAs knows its memory per GPU.
func TestEveryGPUHasSpecs(t *testing.T) {
	c := embeddedForTest(t)
	missing := map[string]bool{}
	for _, o := range c.Offers(pricing.Query{}) {
		g, ok := c.GPU(o.Type.GPUModel)
		if !ok || g.Vendor == "" {
			missing[o.Type.GPUModel] = true
			continue
		}
		if g.Vendor != "xilinx" && !(o.Type.GPUMemoryGiB > 0) {
			t.Errorf("%s %s: no GPU memory", o.Type.Provider, o.Type.Name)
		}
		if !(o.Type.GPUCount > 0) {
			t.Errorf("%s %s: GPU count %v", o.Type.Provider, o.Type.Name, o.Type.GPUCount)
		}
	}
	for m := range missing {
		t.Errorf("GPU %q has no spec", m)
	}
	// The 22 GPUs of the shared table are all known.
	for _, name := range []string{"T4", "V100", "V100-32GB", "A10G", "L4", "L40S", "A100", "A100-80GB", "H100", "H100-PCIe",
		"H200", "B200", "MI300X", "GB200", "B300", "MI325X", "RTXPRO6000", "L40", "A10", "A6000", "H100-NVL", "H200-NVL"} {
		g, ok := c.GPU(name)
		if !ok || !(g.MemoryGiB > 0) || !(g.MemoryBandwidthGBs > 0) {
			t.Errorf("GPU(%q) = %+v, %v; want a spec with memory and bandwidth", name, g, ok)
		}
	}
}

// TestEveryOfferPricedOrMarked: an offer without an on-demand price is
// marked unavailable by a reported correction of its row (or, for a GCP
// machine, of its accelerator row).
func TestEveryOfferPricedOrMarked(t *testing.T) {
	c := embeddedForTest(t)
	marked := map[string]bool{}
	for _, x := range c.Corrections() {
		if x.Field == "Price" && x.To == unpriced {
			marked[strings.ToLower(string(x.Provider)+"|"+x.Region+"|"+x.InstanceType)] = true
		}
	}
	n := 0
	for _, o := range c.Offers(pricing.Query{}) {
		for _, p := range []*pricing.Price{o.OnDemand, o.Spot} {
			if p != nil && p.Hourly.Exponent() < -pricePlaces {
				t.Errorf("%s %s %s: %s has more than %d decimal places", o.Type.Provider, o.Region, o.Type.Name, p.Hourly, pricePlaces)
			}
		}
		if o.OnDemand != nil {
			if !o.OnDemand.Hourly.IsPositive() && o.Type.Name != "a4-highgpu-8g" {
				t.Errorf("%s %s %s: on-demand %s", o.Type.Provider, o.Region, o.Type.Name, o.OnDemand.Hourly)
			}
			continue
		}
		n++
		k := strings.ToLower(string(o.Type.Provider) + "|" + o.Region + "|")
		ok := marked[k+strings.ToLower(o.Type.Name)]
		for _, cnt := range []string{"1", "2", "4", "8", "16"} {
			ok = ok || marked[k+strings.ToLower(accelPrefix+o.Type.GPUModel+"x"+cnt)]
		}
		if !ok {
			t.Errorf("%s %s %s has no on-demand price and no correction marks it unavailable", o.Type.Provider, o.Region, o.Type.Name)
		}
	}
	if n == 0 {
		t.Error("no unpriced offer at all: the check checks nothing")
	}
}

// TestCommitmentBelowOnDemand: every commitment rate is below the on-demand
// price its own source states, and below the catalog's on-demand price of
// the same type and region.
func TestCommitmentBelowOnDemand(t *testing.T) {
	c := embeddedForTest(t).(*catalog)
	checked := 0
	for _, r := range c.commitments {
		if !r.OnDemandHourly.IsZero() && !r.Hourly.LessThan(r.OnDemandHourly) {
			t.Errorf("%s %s %s %s %s: rate %s not below its source's on-demand %s", r.Provider, r.Region, r.InstanceType, r.Kind, r.Term, r.Hourly, r.OnDemandHourly)
		}
		o, ok := c.Offer(r.Provider, r.Region, r.InstanceType)
		if !ok || o.OnDemand == nil || r.Kind == pricing.CapacityBlock {
			continue
		}
		checked++
		if !r.Hourly.LessThan(o.OnDemand.Hourly) {
			t.Errorf("%s %s %s %s %s %s: rate %s not below the catalog's on-demand %s", r.Provider, r.Region, r.InstanceType, r.Kind, r.Term, r.Payment, r.Hourly, o.OnDemand.Hourly)
		}
	}
	if checked < 1000 {
		t.Errorf("only %d rates compared with a catalog price", checked)
	}
}

// regionPattern is how each cloud's API spells a region.
var regionPattern = map[fleet.Provider]*regexp.Regexp{
	fleet.AWS:   regexp.MustCompile(`^[a-z]{2}(-gov)?-[a-z]+-[0-9]$`),
	fleet.Azure: regexp.MustCompile(`^[a-z]+[0-9]?$`),
	fleet.GCP:   regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`),
}

// awsLocalZone is an AWS Local Zone name, e.g. us-east-1-dfw-2a (Dallas),
// whose parent region is the first group.
var awsLocalZone = regexp.MustCompile(`^([a-z]{2}-[a-z]+-[0-9])-[a-z]{3}-[0-9][a-z]$`)

// knownRegions are the region names the clouds publish (AWS
// DescribeRegions, Azure `az account list-locations`, GCP regions.list), as
// far as any price source here uses them.
var knownRegions = map[fleet.Provider]string{
	fleet.AWS: `af-south-1 ap-east-1 ap-northeast-1 ap-northeast-2 ap-northeast-3 ap-south-1 ap-south-2 ap-southeast-1
		ap-southeast-2 ap-southeast-3 ap-southeast-4 ap-southeast-5 ap-southeast-7 ca-central-1 ca-west-1 eu-central-1 eu-central-2
		eu-north-1 eu-south-1 eu-south-2 eu-west-1 eu-west-2 eu-west-3 il-central-1 me-central-1 me-south-1 mx-central-1
		sa-east-1 us-east-1 us-east-2 us-gov-east-1 us-gov-west-1 us-west-1 us-west-2`,
	fleet.Azure: `australiacentral australiacentral2 australiaeast australiasoutheast austriaeast belgiumcentral brazilsouth canadacentral canadaeast
		centralindia centralus chilecentral eastasia eastus eastus2 francecentral germanynorth germanywestcentral indonesiacentral israelcentral
		italynorth jioindiacentral jioindiawest japaneast japanwest koreacentral koreasouth malaysiawest mexicocentral newzealandnorth northcentralus northeurope
		norwayeast norwaywest polandcentral qatarcentral southafricanorth southafricawest southcentralus southeastasia southindia spaincentral swedencentral
		switzerlandnorth switzerlandwest uaecentral uaenorth uksouth ukwest westcentralus westeurope westindia westus westus2 westus3`,
	fleet.GCP: `africa-south1 asia-east1 asia-east2 asia-northeast1 asia-northeast2 asia-northeast3 asia-south1 asia-south2
		asia-southeast1 asia-southeast2 australia-southeast1 australia-southeast2 europe-central2 europe-north1 europe-north2
		europe-southwest1 europe-west1 europe-west10 europe-west12 europe-west2 europe-west3 europe-west4 europe-west6
		europe-west8 europe-west9 me-central1 me-central2 me-west1 northamerica-northeast1 northamerica-northeast2
		northamerica-south1 southamerica-east1 southamerica-west1 us-central1 us-central2 us-east1 us-east4 us-east5 us-south1
		us-west1 us-west2 us-west3 us-west4 us-west8`,
}

// TestRegionSpelling: every region is spelled as its cloud's API spells it
// and is one the cloud publishes.
func TestRegionSpelling(t *testing.T) {
	c := embeddedForTest(t).(*catalog)
	known := map[fleet.Provider]map[string]bool{}
	for p, list := range knownRegions {
		known[p] = map[string]bool{}
		for _, r := range strings.Fields(list) {
			if !regionPattern[p].MatchString(r) {
				t.Errorf("known %s region %q does not match the pattern", p, r)
			}
			known[p][r] = true
		}
	}
	check := func(p fleet.Provider, region, what string) {
		if !regionPattern[p].MatchString(region) || !known[p][region] {
			t.Errorf("%s: %s region %q is not a region name the cloud's API uses", what, p, region)
		}
	}
	for _, o := range c.offers {
		check(o.Type.Provider, o.Region, o.Type.Name)
	}
	for _, r := range c.commitments {
		region := r.Region
		if m := awsLocalZone.FindStringSubmatch(region); r.Provider == fleet.AWS && m != nil {
			region = m[1] // Capacity Blocks are sold in Local Zones: check the parent region
		}
		check(r.Provider, region, "commitment "+r.InstanceType)
	}
	for k := range c.advice {
		check(k.provider, k.region, "spot advice "+k.name)
	}
}

// TestNoDuplicateKeys: one offer per (provider, region, type) and one type
// per (provider, name), ignoring case; the index points at its own offer.
func TestNoDuplicateKeys(t *testing.T) {
	c := embeddedForTest(t).(*catalog)
	seen := map[offerKey]bool{}
	for i, o := range c.offers {
		k := offerKeyOf(o.Type.Provider, o.Region, o.Type.Name)
		if seen[k] {
			t.Errorf("duplicate offer %v", k)
		}
		seen[k] = true
		if c.offerIndex[k] != i {
			t.Errorf("index of %v = %d, want %d", k, c.offerIndex[k], i)
		}
		if ty := c.types[keyOf(o.Type.Provider, o.Type.Name)]; ty != o.Type {
			t.Errorf("offer %v has type %+v, the catalog %+v", k, o.Type, ty)
		}
	}
	if len(seen) != len(c.offerIndex) {
		t.Errorf("%d offers, %d index entries", len(seen), len(c.offerIndex))
	}
}

// rawKeys reads a price file independently of the loader: the (type,
// region) keys it has a complete row for, lower case, with the row's
// on-demand price.
func rawKeys(t *testing.T, pf priceFile) map[string]string {
	t.Helper()
	b, err := fs.ReadFile(dataFS, "data/"+pf.file)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs[1:] {
		typ, accel, count, region, price := r[0], r[1], r[2], r[6], r[8]
		switch pf.kind {
		case kindTPU:
			typ = accel
		case kindN1Hosts:
			typ = typ + "+" // an attached machine's name starts so
		case kindWhole:
			if accel == "" || count == "" || r[3] == "" || r[4] == "" {
				continue // incomplete: not a claim
			}
		}
		if typ == "" {
			continue
		}
		out[strings.ToLower(typ)+"|"+strings.ToLower(region)] = price
	}
	return out
}

// TestPrecedence: every offer comes from the first file, in Precedence
// order, that has a complete row for its (provider, type, region); where
// Cyclenerd's Billing Catalog file prices a GCP machine, the catalog's price
// is exactly Cyclenerd's at 6 decimal places (never added to an accelerator
// row), so every GCP
// A100 price Cyclenerd has matches the Billing Catalog within 1 %.
func TestPrecedence(t *testing.T) {
	c := embeddedForTest(t)
	srcLabel := map[string]string{}
	for _, e := range readSources(t) {
		srcLabel[e.File] = e.label()
	}
	raw := map[string]map[string]string{}
	for _, pf := range priceFiles {
		raw[pf.file] = rawKeys(t, pf)
	}
	if got := strings.Join(Precedence(fleet.Azure), ","); got != "azure-gpu-eu-radar.csv,azure-gpu-allregions.csv,skypilot-azure-gpu.csv" {
		t.Errorf("Azure precedence = %s", got)
	}
	if got := Precedence(fleet.GCP)[0]; got != "gcp-gpu-machines-cyclenerd.csv" {
		t.Errorf("GCP precedence starts with %s, want the Billing Catalog file", got)
	}
	a100 := 0
	for _, o := range c.Offers(pricing.Query{}) {
		name := strings.ToLower(o.Type.Name)
		if m, _, _, ok := pricing.ParseAttachedTypeName(o.Type.Name); ok {
			name = strings.ToLower(m) + "+"
		}
		k := name + "|" + strings.ToLower(o.Region)
		want := ""
		for _, f := range Precedence(o.Type.Provider) {
			if _, ok := raw[f][k]; ok {
				want = f
				break
			}
		}
		if want == "" {
			t.Errorf("%s %s %s: no file has a row for it", o.Type.Provider, o.Region, o.Type.Name)
			continue
		}
		p := o.OnDemand
		if p == nil {
			p = o.Spot
		}
		if p != nil && !strings.HasPrefix(p.Source, srcLabel[want]) {
			t.Errorf("%s %s %s: source %q, want %s's (%s)", o.Type.Provider, o.Region, o.Type.Name, p.Source, want, srcLabel[want])
		}
		if want == "gcp-gpu-machines-cyclenerd.csv" && o.OnDemand != nil {
			cyc := decimal.RequireFromString(raw[want][k]).Round(pricePlaces)
			if !o.OnDemand.Hourly.Equal(cyc) {
				t.Errorf("gcp %s %s: %s, Cyclenerd says %s", o.Region, o.Type.Name, o.OnDemand.Hourly, cyc)
			}
			if strings.HasPrefix(o.Type.GPUModel, "A100") {
				a100++
				if o.OnDemand.Hourly.Sub(cyc).Abs().GreaterThan(cyc.Div(decimal.NewFromInt(100))) {
					t.Errorf("gcp %s %s: A100 price %s is not within 1 %% of the Billing Catalog's %s", o.Region, o.Type.Name, o.OnDemand.Hourly, cyc)
				}
			}
		}
	}
	for _, src := range c.Sources() {
		if src.Name == "GCP GPU prices" && !strings.Contains(src.Note, "offers superseded by files of higher precedence") {
			t.Errorf("SkyPilot's GCP source does not say how many of its offers the Billing Catalog superseded: %q", src.Note)
		}
	}
	if a100 < 300 {
		t.Errorf("only %d GCP A100 offers checked against the Billing Catalog", a100)
	}
	o, ok := c.Offer(fleet.GCP, "europe-west4", "a2-highgpu-1g")
	if !ok || o.OnDemand == nil || o.OnDemand.Hourly.String() != "3.747972" {
		t.Errorf("a2-highgpu-1g europe-west4 = %+v, want the Billing Catalog's 3.747972", o.OnDemand)
	}
}

func readSources(t *testing.T) []sourceEntry {
	t.Helper()
	l := &loader{fsys: mustSub(t), c: &catalog{}}
	if err := l.loadSources(); err != nil {
		t.Fatal(err)
	}
	var out []sourceEntry
	for _, e := range l.sources {
		out = append(out, e)
	}
	return out
}

func mustSub(t *testing.T) fs.FS {
	t.Helper()
	sub, err := fs.Sub(dataFS, "data")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestRadarTrace: every price cell of the EU radar file has its Retail API
// trace with the same price.
func TestRadarTrace(t *testing.T) {
	read := func(name string) [][]string {
		b, err := fs.ReadFile(dataFS, "data/"+name)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs[1:]
	}
	trace := map[string]string{}
	for _, r := range read(fileRadarTrace) {
		if r[4] == "" || r[6] == "" {
			t.Errorf("trace row %v lacks its skuName or meter", r)
		}
		trace[r[0]+"|"+r[1]+"|"+r[2]] = r[3]
	}
	n := 0
	for _, r := range read("azure-gpu-eu-radar.csv") {
		for col, i := range map[string]int{"Price": 8, "SpotPrice": 9} {
			if r[i] == "" {
				continue
			}
			n++
			got, ok := trace[r[0]+"|"+r[6]+"|"+col]
			if !ok || !decimal.RequireFromString(got).Equal(decimal.RequireFromString(r[i])) {
				t.Errorf("%s %s %s %s: trace %q", r[0], r[6], col, r[i], got)
			}
		}
	}
	if n < 300 {
		t.Errorf("only %d cells traced", n)
	}
}
