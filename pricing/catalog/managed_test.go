package catalog

import (
	"encoding/csv"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// managedRow is one row of the managed-AI cross-check files in
// testdata/managed-ai (copies of shared/data/managed-ai, see its README).
type managedRow struct {
	line                                 int
	component, typ, accel, count, region string
	price, source, asOf                  string
}

func readManaged(t *testing.T, file string) []managedRow {
	t.Helper()
	f, err := os.Open("testdata/managed-ai/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "service,component,instance_type,accelerator,accelerator_count,region,price_usd_per_hour,source,as_of"
	if got := strings.Join(recs[0], ","); got != want {
		t.Fatalf("%s header = %q, want %q", file, got, want)
	}
	var out []managedRow
	for i, r := range recs[1:] {
		if r[7] == "" {
			t.Fatalf("%s:%d has no source", file, i+2)
		}
		out = append(out, managedRow{i + 2, r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]})
	}
	return out
}

// roundsTo reports whether got, rounded to as many decimals as the source
// printed, is the source's value (1.4084 is printed 1.408 and 1.41).
func roundsTo(got decimal.Decimal, printed string) bool {
	want := decimal.RequireFromString(printed)
	places := int32(0)
	if i := strings.IndexByte(printed, '.'); i >= 0 {
		places = int32(len(printed) - i - 1)
	}
	return got.Round(places).Equal(want)
}

func markupsForTest(t *testing.T) map[string]*markup {
	t.Helper()
	l := &loader{fsys: mustSub(t)}
	m, err := l.loadMarkups()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSageMakerTypes(t *testing.T) {
	c := embeddedForTest(t)
	tab, err := readTable(mustSub(t), fileSageMakerTypes, "instanceType", "apis")
	if err != nil {
		t.Fatal(err)
	}
	known := 0
	for _, r := range tab.rows {
		name := tab.get(r, "instanceType")
		vm, vmOK := c.InstanceType(fleet.AWS, strings.TrimPrefix(name, "ml."))
		for _, spelling := range []string{name, strings.ToUpper(name)} {
			got, ok := c.InstanceType(fleet.AWS, spelling)
			if ok != vmOK {
				t.Errorf("%s known = %v, but EC2 %s known = %v", spelling, ok, vm.Name, vmOK)
				continue
			}
			if !ok {
				continue
			}
			want := vm
			want.Name, want.Service = name, fleet.SageMaker
			if got != want {
				t.Errorf("%s = %+v, want %+v", spelling, got, want)
			}
		}
		if vmOK {
			known++
		}
		if _, ok := c.InstanceType(fleet.GCP, name); ok {
			t.Errorf("%s known on GCP", name)
		}
	}
	if known != 67 {
		t.Errorf("%d ml.* types known, want 67", known)
	}
	// EC2 types SageMaker does not sell (g4ad, g5g) are unknown under ml.,
	// as are sold types without an EC2 row and names that only look alike.
	for _, name := range []string{"ml.g4ad.xlarge", "ml.g5g.xlarge", "ml.g7.2xlarge", "ml.p6e-gb200.36xlarge", "ml.", "ml.ml.g5.xlarge", "sagemaker.g5.xlarge", "g5.xlarge.ml"} {
		if ty, ok := c.InstanceType(fleet.AWS, name); ok {
			t.Errorf("%s known: %+v", name, ty)
		}
	}
	if _, ok := c.InstanceType(fleet.AWS, "g4ad.xlarge"); !ok {
		t.Error("EC2 g4ad.xlarge unknown: the ml.g4ad check above proves nothing")
	}
	if ty, _ := c.InstanceType(fleet.AWS, "g5.xlarge"); ty.Service != "" {
		t.Errorf("EC2 g5.xlarge service = %q, want none", ty.Service)
	}
}

// TestSageMakerEstimates checks every estimate against the SageMaker prices
// that were observed, and that only the observed size classes are priced.
func TestSageMakerEstimates(t *testing.T) {
	c := embeddedForTest(t)
	markups := markupsForTest(t)
	checked := map[string]int{}
	for _, r := range readManaged(t, "aws-sagemaker.csv") {
		ec2 := strings.TrimPrefix(r.typ, "ml.")
		o, ok := c.Offer(fleet.AWS, r.region, r.typ)
		if markups[ec2] == nil {
			if ok {
				t.Errorf("line %d: %s %s priced (%v) without an observed markup", r.line, r.typ, r.region, o.OnDemand)
			}
			continue
		}
		if !ok || o.OnDemand == nil {
			t.Errorf("line %d: %s %s %s: no estimate, want %s", r.line, r.component, r.typ, r.region, r.price)
			continue
		}
		if !roundsTo(o.OnDemand.Hourly, r.price) {
			t.Errorf("line %d: %s %s %s: estimate %s, source %s", r.line, r.component, r.typ, r.region, o.OnDemand.Hourly, r.price)
		}
		checked[r.region]++
	}
	if want := map[string]int{"us-east-1": 29, "ap-south-1": 9, "ap-northeast-1": 2}; !mapsEqual(checked, want) {
		t.Errorf("rows checked per region = %v, want %v", checked, want)
	}

	// Every estimate is the EC2 price × the markup, dated as the EC2 price,
	// labelled an estimate; every type without a markup is unpriced.
	seen := map[string]bool{}
	for _, o := range c.Offers(pricing.Query{Service: fleet.SageMaker}) {
		ec2 := strings.TrimPrefix(o.Type.Name, "ml.")
		m := markups[ec2]
		vm, ok := c.Offer(fleet.AWS, o.Region, ec2)
		if m == nil || !ok || vm.OnDemand == nil {
			t.Errorf("%s %s priced without a markup or an EC2 price", o.Type.Name, o.Region)
			continue
		}
		p := o.OnDemand
		if !p.Hourly.Equal(vm.OnDemand.Hourly.Mul(m.rate).Round(pricePlaces)) || p.AsOf != vm.OnDemand.AsOf ||
			p.InstanceType != o.Type.Name || p.Option != pricing.OnDemand || o.Spot != nil ||
			!strings.HasPrefix(p.Source, "estimate: EC2 on-demand ("+vm.OnDemand.Source+") × "+m.text+" SageMaker markup") {
			t.Errorf("%s %s = %+v (spot %v), EC2 %+v × %s", o.Type.Name, o.Region, p, o.Spot, vm.OnDemand, m.text)
		}
		if (m.basis == "interpolated") != strings.Contains(p.Source, "this size not observed") {
			t.Errorf("%s source %q does not say its basis %s", o.Type.Name, p.Source, m.basis)
		}
		seen[ec2] = true
	}
	for ec2 := range markups {
		if !seen[ec2] {
			t.Errorf("markup of %s prices no offer", ec2)
		}
	}
	for _, name := range []string{"ml.g5.16xlarge", "ml.g5.48xlarge", "ml.g6e.xlarge", "ml.g6e.48xlarge", "ml.inf2.xlarge", "ml.trn1.32xlarge", "ml.p4de.24xlarge", "ml.p5.4xlarge", "ml.p5en.48xlarge"} {
		if _, ok := c.InstanceType(fleet.AWS, name); !ok {
			t.Errorf("%s unknown", name)
		}
		if got := c.Offers(pricing.Query{Service: fleet.SageMaker, InstanceType: name}); len(got) > 0 {
			t.Errorf("%s priced offline in %d regions, want none (no observed markup)", name, len(got))
		}
	}
	src := sourceNamed(t, c, "SageMaker price estimates (markup over EC2)")
	if !strings.Contains(src.Note, "ESTIMATES") || !strings.Contains(src.Note, "licence unknown") {
		t.Errorf("source note %q does not say it is an estimate of unknown licence", src.Note)
	}
}

func sourceNamed(t *testing.T, c pricing.Catalog, name string) pricing.Source {
	t.Helper()
	for _, s := range c.Sources() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no source %q", name)
	return pricing.Source{}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestSageMakerOffersForRightsizing(t *testing.T) {
	c := embeddedForTest(t)
	got := c.Offers(pricing.Query{Service: fleet.SageMaker, Provider: fleet.AWS, Region: "us-east-1"})
	var names []string
	for _, o := range got {
		names = append(names, o.Type.Name)
	}
	want := []string{"ml.g4dn.xlarge", "ml.g5.12xlarge", "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge", "ml.g5.xlarge",
		"ml.g6.12xlarge", "ml.g6.2xlarge", "ml.g6.4xlarge", "ml.g6.8xlarge", "ml.g6.xlarge",
		"ml.g6e.12xlarge", "ml.g6e.2xlarge", "ml.g6e.4xlarge", "ml.g6e.8xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge"}
	if !slices.Equal(names, want) {
		t.Errorf("SageMaker offers in us-east-1 = %v, want %v", names, want)
	}
	if got := c.Offers(pricing.Query{Service: fleet.SageMaker, GPUModel: "a10g", Region: "us-east-1"}); len(got) != 5 {
		t.Errorf("%d A10G SageMaker offers in us-east-1, want 5", len(got))
	}
	for _, q := range []pricing.Query{
		{Provider: fleet.AWS, Region: "us-east-1"},
		{InstanceType: "ml.g5.xlarge"},
		{GPUModel: "H100"},
	} {
		for _, o := range c.Offers(q) {
			if o.Type.Service != "" || strings.HasPrefix(o.Type.Name, "ml.") || strings.HasPrefix(o.Type.Name, "vertex-ai/") {
				t.Errorf("Offers(%+v) lists managed %s", q, o.Type.Name)
			}
		}
	}
}

// TestQueryServiceContract: over random queries, an empty Service lists
// virtual machines only, a Service lists that service's types only, and
// together they partition what the other fields match.
func TestQueryServiceContract(t *testing.T) {
	c := embeddedForTest(t).(*catalog)
	rng := rand.New(rand.NewPCG(35, 1))
	pick := func(vals []string) string { return vals[rng.IntN(len(vals))] }
	var regions, gpus, names []string
	for _, o := range c.offers {
		regions = append(regions, o.Region)
		gpus = append(gpus, o.Type.GPUModel)
		names = append(names, o.Type.Name)
	}
	services := append([]fleet.ManagedService{""}, fleet.ManagedServices...)
	providers := []fleet.Provider{"", fleet.AWS, fleet.Azure, fleet.GCP}
	for i := range 400 {
		q := pricing.Query{Provider: providers[rng.IntN(len(providers))]}
		if rng.IntN(2) == 0 {
			q.Region = pick(regions)
		}
		if rng.IntN(3) == 0 {
			q.GPUModel = pick(gpus)
		}
		if rng.IntN(4) == 0 {
			q.InstanceType = pick(names)
			if rng.IntN(2) == 0 {
				q.InstanceType = strings.ToUpper(q.InstanceType)
			}
		}
		if rng.IntN(4) == 0 {
			q.MinGPUMemoryGiB = float64(rng.IntN(200))
		}
		total := 0
		for _, s := range services {
			q.Service = s
			for _, o := range c.Offers(q) {
				if o.Type.Service != s {
					t.Fatalf("query %d %+v lists %s of service %q", i, q, o.Type.Name, o.Type.Service)
				}
				total++
			}
		}
		q.Service = ""
		all := 0
		for _, o := range c.offers {
			o2 := o
			o2.Type.Service = ""
			if q.Matches(o2) {
				all++
			}
		}
		if total != all {
			t.Fatalf("query %d %+v: %d offers over all services, %d match the other fields", i, q, total, all)
		}
	}
}

func TestManagedSpotAdvice(t *testing.T) {
	c := embeddedForTest(t).(*catalog)
	tab, err := readTable(mustSub(t), fileSageMakerTypes, "instanceType", "apis")
	if err != nil {
		t.Fatal(err)
	}
	training := map[string]bool{}
	for _, r := range tab.rows {
		training[strings.ToLower(tab.get(r, "instanceType"))] = slices.Contains(strings.Fields(tab.get(r, "apis")), "training")
	}
	n := 0
	for k, a := range c.advice {
		if !strings.HasPrefix(k.name, "ml.") {
			continue
		}
		n++
		if !training[k.name] {
			t.Errorf("%s %s has spot advice but SageMaker training does not accept it", k.name, k.region)
		}
		vm, ok := c.SpotAdvice(fleet.AWS, k.region, strings.TrimPrefix(k.name, "ml."))
		if !ok || vm.SavingsPercent != a.SavingsPercent || vm.Band != a.Band || vm.BandIndex != a.BandIndex || vm.AsOf != a.AsOf {
			t.Errorf("%s %s advice %+v, EC2 %+v", k.name, k.region, a, vm)
		}
		if !strings.HasPrefix(a.Source, "estimate: ") || !strings.Contains(a.Source, "managed spot training") {
			t.Errorf("%s source %q does not say it is the managed-spot estimate", k.name, a.Source)
		}
	}
	if n != 556 {
		t.Errorf("%d ml.* spot advice entries, want 556", n)
	}
	if _, ok := c.SpotAdvice(fleet.AWS, "us-east-1", "ml.g5.xlarge"); !ok {
		t.Error("no managed spot advice for ml.g5.xlarge in us-east-1")
	}
	for _, name := range []string{"ml.inf2.xlarge", "ml.dl1.24xlarge"} { // not sold for training
		if a, ok := c.SpotAdvice(fleet.AWS, "us-east-1", name); ok {
			t.Errorf("%s advice %+v; training does not accept it", name, a)
		}
	}
	for k := range c.advice {
		if k.provider != fleet.AWS {
			t.Errorf("spot advice for %s %s: Vertex AI and Azure ML publish none offline", k.provider, k.name)
		}
	}
}

func TestVertexTypes(t *testing.T) {
	c := embeddedForTest(t)
	for _, tc := range []struct {
		name, vm string
	}{
		{"vertex-ai/prediction/a3-highgpu-1g", "a3-highgpu-1g"},
		{"vertex-ai/training/a3-highgpu-8g", "a3-highgpu-8g"},
		{"VERTEX-AI/Prediction/A2-ULTRAGPU-1G", "a2-ultragpu-1g"},
		{"vertex-ai/prediction/g2-standard-8", "g2-standard-8"},
		{"vertex-ai/prediction/n1-standard-8+1xNVIDIA_TESLA_T4", "n1-standard-8+1xT4"},
		{"vertex-ai/training/n1-highmem-16+2xNVIDIA_TESLA_V100", "n1-highmem-16+2xV100"},
		{"vertex-ai/training/n1-standard-4+1xnvidia_tesla_p4", "n1-standard-4+1xP4"},
	} {
		got, ok := c.InstanceType(fleet.GCP, tc.name)
		vm, vmOK := c.InstanceType(fleet.GCP, tc.vm)
		if !ok || !vmOK {
			t.Errorf("%s known = %v, %s known = %v", tc.name, ok, tc.vm, vmOK)
			continue
		}
		if got.Service != fleet.VertexAI || !strings.EqualFold(got.Name, tc.name) {
			t.Errorf("%s = %+v", tc.name, got)
		}
		got.Name, got.Service = vm.Name, ""
		if got != vm {
			t.Errorf("%s hardware %+v, want %s's %+v", tc.name, got, tc.vm, vm)
		}
	}
	for _, name := range []string{
		"vertex-ai/prediction/n1-standard-8+1xT4",              // the catalog's GPU name, not Vertex's enum
		"vertex-ai/prediction/n1-standard-8",                   // N1 needs its accelerators
		"vertex-ai/serving/a3-highgpu-1g",                      // no such task
		"vertex-ai/prediction/tpu-v5p-8",                       // a TPU slice is not a Vertex machine type
		"vertex-ai/prediction/n1-standard-8+3xNVIDIA_TESLA_T4", // N1 takes 1, 2 or 4 T4
		"a3-highgpu-1g/prediction",
		"sagemaker/prediction/a3-highgpu-1g",
	} {
		if ty, ok := c.InstanceType(fleet.GCP, name); ok {
			t.Errorf("%s known: %+v", name, ty)
		}
	}
	if ty, _ := c.InstanceType(fleet.GCP, "a3-highgpu-1g"); ty.Service != "" {
		t.Errorf("Compute Engine a3-highgpu-1g service = %q", ty.Service)
	}
}

// TestVertexPrices checks the node prices against the Vertex AI rows of
// gcp-vertex.csv and that no Vertex price is a Compute Engine price.
func TestVertexPrices(t *testing.T) {
	c := embeddedForTest(t)
	nodes := 0
	for _, r := range readManaged(t, "gcp-vertex.csv") {
		if r.typ == "" || r.accel == "" {
			continue // per-unit SKU rows, and a CPU-only host the GPU catalog does not hold
		}
		name := pricing.VertexTypeName(r.component, r.typ, "", 0)
		o, ok := c.Offer(fleet.GCP, r.region, name)
		if !ok || o.OnDemand == nil {
			t.Errorf("line %d: %s %s unpriced, want %s", r.line, name, r.region, r.price)
			continue
		}
		if !o.OnDemand.Hourly.Equal(decimal.RequireFromString(r.price)) || o.OnDemand.AsOf != r.asOf {
			t.Errorf("line %d: %s = %s as of %s, source %s as of %s", r.line, name, o.OnDemand.Hourly, o.OnDemand.AsOf, r.price, r.asOf)
		}
		nodes++
	}
	if nodes != 2 {
		t.Errorf("%d node rows checked, want 2 (a3-highgpu-1g prediction, a3-highgpu-8g training)", nodes)
	}
	offers := c.Offers(pricing.Query{Service: fleet.VertexAI})
	if len(offers) != 8 {
		t.Errorf("%d Vertex AI offers, want 8", len(offers))
	}
	for _, o := range offers {
		p := o.OnDemand
		if o.Region != "us-central1" || o.Spot != nil || p == nil || p.AsOf != "2025-08-16" ||
			!strings.Contains(p.Source, "SKU") || !strings.Contains(p.Source, "no management fee") {
			t.Errorf("%s %s = %+v", o.Type.Name, o.Region, p)
			continue
		}
		vm := o.Type.Name[strings.LastIndexByte(o.Type.Name, '/')+1:]
		if gce, ok := c.Offer(fleet.GCP, o.Region, vm); ok && gce.OnDemand != nil && gce.OnDemand.Hourly.Equal(p.Hourly) {
			t.Errorf("%s is priced as Compute Engine's %s (%s)", o.Type.Name, vm, p.Hourly)
		}
	}
	pr, _ := c.Offer(fleet.GCP, "us-central1", "vertex-ai/prediction/a3-highgpu-1g")
	tr, _ := c.Offer(fleet.GCP, "us-central1", "vertex-ai/training/a3-highgpu-1g")
	if pr.OnDemand == nil || tr.OnDemand == nil || !strings.Contains(pr.OnDemand.Source, "AE9C-DB60-DF46") || !strings.Contains(tr.OnDemand.Source, "3F95-001E-B747") {
		t.Errorf("prediction and training must each cite their own SKUs: %v / %v", pr.OnDemand, tr.OnDemand)
	}
	for _, name := range []string{"vertex-ai/prediction/a3-highgpu-1g", "vertex-ai/prediction/n1-standard-8+1xNVIDIA_TESLA_T4"} {
		if o, ok := c.Offer(fleet.GCP, "europe-west4", name); ok {
			t.Errorf("%s priced in europe-west4 offline: %+v", name, o.OnDemand)
		}
	}
}

func TestVertexTypeName(t *testing.T) {
	for _, tc := range []struct {
		task, machine, accel string
		n                    float64
		want                 string
	}{
		{"prediction", "a3-highgpu-1g", "", 0, "vertex-ai/prediction/a3-highgpu-1g"},
		{"prediction", "a3-highgpu-1g", "NVIDIA_H100_80GB", 0, "vertex-ai/prediction/a3-highgpu-1g"},
		{"prediction", "a3-highgpu-1g", "NVIDIA_H100_80GB", 1, "vertex-ai/prediction/a3-highgpu-1g"},
		{"prediction", "n1-standard-8", "NVIDIA_TESLA_T4", 1, "vertex-ai/prediction/n1-standard-8+1xNVIDIA_TESLA_T4"},
		{"training", "n1-highmem-16", "NVIDIA_TESLA_V100", 2, "vertex-ai/training/n1-highmem-16+2xNVIDIA_TESLA_V100"},
	} {
		if got := pricing.VertexTypeName(tc.task, tc.machine, tc.accel, tc.n); got != tc.want {
			t.Errorf("VertexTypeName(%q, %q, %q, %v) = %q, want %q", tc.task, tc.machine, tc.accel, tc.n, got, tc.want)
		}
	}
}

// TestAzureMLPrices: Azure ML bills the VM, so the catalog's VM price of
// each size the managed online endpoints sell is the price azure-ml.csv
// joined from the same shared VM file.
func TestAzureMLPrices(t *testing.T) {
	c := embeddedForTest(t)
	sizes := map[string]bool{}
	for _, r := range readManaged(t, "azure-ml.csv") {
		sizes[r.typ] = true
		o, ok := c.Offer(fleet.Azure, r.region, r.typ)
		if !ok || o.OnDemand == nil {
			t.Errorf("line %d: %s %s unpriced, want %s", r.line, r.typ, r.region, r.price)
			continue
		}
		if !o.OnDemand.Hourly.Equal(decimal.RequireFromString(r.price)) {
			t.Errorf("line %d: %s %s = %s (%s), azure-ml.csv %s", r.line, r.typ, r.region, o.OnDemand.Hourly, o.OnDemand.Source, r.price)
		}
		if o.Type.Service != "" {
			t.Errorf("%s is a managed type (%s); Azure ML bills the VM", r.typ, o.Type.Service)
		}
	}
	if len(sizes) != 22 {
		t.Errorf("%d sizes, want 22", len(sizes))
	}
	if got := c.Offers(pricing.Query{Service: fleet.AzureML}); len(got) != 0 {
		t.Errorf("%d Azure ML offers, want none (the VM price applies)", len(got))
	}
}

// TestLivePricesReplaceEstimates: a live SageMaker price (the Pricing API's
// AmazonSageMaker offer) replaces the estimate, and prices a type the
// embedded catalog leaves unpriced, under the service, never as a VM.
func TestLivePricesReplaceEstimates(t *testing.T) {
	live := func(typ, hourly string) pricing.Price {
		return pricing.Price{Provider: fleet.AWS, Region: "us-east-1", InstanceType: typ, Option: pricing.OnDemand,
			Hourly: decimal.RequireFromString(hourly), Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "AWS Price List API (AmazonSageMaker)", AsOf: "2026-12-06"}
	}
	c := pricing.Overlay(embeddedForTest(t), []pricing.Price{live("ml.g5.xlarge", "1.408"), live("ml.g5.48xlarge", "20.36")})
	for typ, want := range map[string]string{"ml.g5.xlarge": "1.408", "ml.g5.48xlarge": "20.36"} {
		o, ok := c.Offer(fleet.AWS, "us-east-1", typ)
		if !ok || o.OnDemand == nil || o.OnDemand.Hourly.String() != want || strings.HasPrefix(o.OnDemand.Source, "estimate") ||
			o.Type.Service != fleet.SageMaker {
			t.Errorf("%s after live prices = %+v (%v)", typ, o, ok)
		}
	}
	if o, _ := c.Offer(fleet.AWS, "us-east-2", "ml.g5.xlarge"); o.OnDemand == nil || !strings.HasPrefix(o.OnDemand.Source, "estimate") {
		t.Errorf("us-east-2 ml.g5.xlarge lost its estimate: %+v", o.OnDemand)
	}
	for _, o := range c.Offers(pricing.Query{Provider: fleet.AWS, Region: "us-east-1"}) {
		if o.Type.Service != "" {
			t.Errorf("VM query lists %s", o.Type.Name)
		}
	}
	if got := c.Offers(pricing.Query{Service: fleet.SageMaker, Region: "us-east-1", InstanceType: "ml.g5.48xlarge"}); len(got) != 1 {
		t.Errorf("SageMaker query lists %d ml.g5.48xlarge offers, want 1", len(got))
	}
}

// TestManagedFixture prices the shared fixture's items the way the engine
// will, under Instance.PriceKey(): every type is known with its service's
// hardware; SageMaker items carry estimates, Azure ML items and the
// Workbench instance the VM price; the Vertex AI A100 items are known but
// unpriced offline (only A3/H100 SKUs are embedded).
func TestManagedFixture(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fleets/managed-ai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := fleet.Parse("managed-ai.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	c := embeddedForTest(t)
	var unpriced []string
	for _, in := range fl.Instances {
		key := in.PriceKey()
		ty, ok := c.InstanceType(in.Provider, key)
		if !ok {
			t.Errorf("%s: %s unknown", in.ID, key)
			continue
		}
		want := fleet.ManagedService("")
		if in.Managed != nil && in.Managed.Service != fleet.AzureML && in.Managed.PriceType != "" || strings.HasPrefix(key, "ml.") {
			want = in.Managed.Service
		}
		if ty.Service != want {
			t.Errorf("%s: %s service %q, want %q", in.ID, key, ty.Service, want)
		}
		if in.GPU.Model != "" && !strings.EqualFold(ty.GPUModel, in.GPU.Model) {
			t.Errorf("%s: %s GPU %s, the item says %s", in.ID, key, ty.GPUModel, in.GPU.Model)
		}
		o, ok := c.Offer(in.Provider, in.Region, key)
		if !ok || o.OnDemand == nil {
			unpriced = append(unpriced, key)
			continue
		}
		if estimate := strings.HasPrefix(o.OnDemand.Source, "estimate:"); estimate != (ty.Service == fleet.SageMaker) {
			t.Errorf("%s: %s source %q", in.ID, key, o.OnDemand.Source)
		}
	}
	slices.Sort(unpriced)
	if want := []string{"vertex-ai/prediction/a2-highgpu-1g", "vertex-ai/training/a2-highgpu-8g"}; !slices.Equal(unpriced, want) {
		t.Errorf("unpriced offline: %v, want %v", unpriced, want)
	}
}
