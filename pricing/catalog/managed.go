package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The data files of the managed AI services' types, relative to data/.
const (
	fileSageMakerTypes  = "sagemaker-instance-types.csv"
	fileSageMakerMarkup = "sagemaker-markup.csv"
	fileVertexAccels    = "vertex-ai-accelerators.csv"
	fileVertexUnits     = "vertex-ai-units.csv"
)

// sageMakerAPIs are the values of sagemaker-instance-types.csv's apis column.
var sageMakerAPIs = []string{"hosting", "notebook", "studio", "training", "processing", "transform", "hyperpod"}

// markup is one row of sagemaker-markup.csv: SageMaker's price over EC2's
// for one type, observed or interpolated, with its evidence.
type markup struct {
	rate     decimal.Decimal
	text     string
	basis    string
	evidence string
	listed   bool
}

// loadManaged adds the types the managed AI services sell, after the
// virtual machines they run on are loaded: SageMaker's ml.* types and
// Vertex AI's priced machines. Azure ML bills the VM itself, so it adds
// nothing.
func (l *loader) loadManaged() error {
	if err := l.loadSageMaker(); err != nil {
		return err
	}
	return l.loadVertex()
}

// loadSageMaker adds ml.<t> for each GPU type SageMaker sells whose EC2
// type <t> the catalog describes, with <t>'s hardware; prices it as an
// estimate (EC2 on-demand × the observed markup) where sagemaker-markup.csv
// has one; and, for the types training accepts, gives <t>'s spot advice as
// the managed spot training estimate.
func (l *loader) loadSageMaker() error {
	markups, err := l.loadMarkups()
	if err != nil {
		return err
	}
	t, err := readTable(l.fsys, fileSageMakerTypes, "instanceType", "apis")
	if err != nil {
		return err
	}
	offersOf := map[string][]int{}
	for i, o := range l.c.offers {
		if o.Type.Provider == fleet.AWS && o.Type.Service == "" {
			k := strings.ToLower(o.Type.Name)
			offersOf[k] = append(offersOf[k], i)
		}
	}
	adviceOf := map[string][]offerKey{}
	for k := range l.c.advice {
		if k.provider == fleet.AWS {
			adviceOf[k.name] = append(adviceOf[k.name], k)
		}
	}
	seen := map[string]bool{}
	for _, r := range t.rows {
		name := t.get(r, "instanceType")
		if len(name) <= len(pricing.SageMakerPrefix) || !strings.EqualFold(name[:len(pricing.SageMakerPrefix)], pricing.SageMakerPrefix) {
			return t.errorf(r, "instance type %q does not start with %q", name, pricing.SageMakerPrefix)
		}
		if seen[strings.ToLower(name)] {
			return t.errorf(r, "a second row for %s", name)
		}
		seen[strings.ToLower(name)] = true
		apis := strings.Fields(t.get(r, "apis"))
		if len(apis) == 0 {
			return t.errorf(r, "%s names no API that accepts it", name)
		}
		for _, a := range apis {
			if !slices.Contains(sageMakerAPIs, a) {
				return t.errorf(r, "api %q is not one of %s", a, strings.Join(sageMakerAPIs, ", "))
			}
		}
		ec2 := strings.ToLower(name[len(pricing.SageMakerPrefix):])
		m := markups[ec2]
		if m != nil {
			m.listed = true
		}
		vm, ok := l.c.types[keyOf(fleet.AWS, ec2)]
		if !ok {
			continue // hardware unknown: the type stays unknown
		}
		mt := vm
		mt.Name, mt.Service = name, fleet.SageMaker
		l.c.types[keyOf(fleet.AWS, name)] = mt
		if m != nil {
			for _, i := range offersOf[ec2] {
				o := l.c.offers[i]
				if o.OnDemand == nil {
					continue
				}
				p := sageMakerEstimate(*o.OnDemand, mt, m)
				if p.Hourly.GreaterThan(maxHourly) {
					return fmt.Errorf("%s: %s in %s estimates %s, above %s", fileSageMakerMarkup, name, o.Region, p.Hourly, maxHourly)
				}
				l.c.offers = append(l.c.offers, pricing.Offer{Type: mt, Region: o.Region, OnDemand: p})
			}
		}
		if slices.Contains(apis, "training") {
			for _, k := range adviceOf[ec2] {
				a := l.c.advice[k]
				a.Source = fmt.Sprintf("estimate: EC2 Spot Instance Advisor band of %s (%s) for SageMaker managed spot training (billed under usage type TrSpt; its discount is not published as data here)",
					vm.Name, a.Source)
				l.c.advice[offerKeyOf(fleet.AWS, k.region, name)] = a
			}
		}
	}
	for _, ec2 := range slices.Sorted(maps.Keys(markups)) {
		if !markups[ec2].listed {
			return fmt.Errorf("%s: %s has a markup but %s does not list ml.%s", fileSageMakerMarkup, ec2, fileSageMakerTypes, ec2)
		}
	}
	return nil
}

// sageMakerEstimate is the estimated SageMaker price of mt: the EC2
// on-demand price times the markup, dated as the EC2 price.
func sageMakerEstimate(ec2 pricing.Price, mt pricing.InstanceType, m *markup) *pricing.Price {
	how := "observed"
	if m.basis == "interpolated" {
		how = "of the " + mt.Family + " sizes either side (this size not observed)"
	}
	p := ec2
	p.InstanceType = mt.Name
	p.Hourly = ec2.Hourly.Mul(m.rate).Round(pricePlaces)
	p.Zone, p.History, p.Commitment = "", nil, ""
	p.Source = fmt.Sprintf("estimate: EC2 on-demand (%s) × %s SageMaker markup %s in AWS Price List rows of 2026-08/09 (data/managed-ai)",
		ec2.Source, m.text, how)
	return &p
}

func (l *loader) loadMarkups() (map[string]*markup, error) {
	t, err := readTable(l.fsys, fileSageMakerMarkup, "family", "size", "markup", "basis", "evidence")
	if err != nil {
		return nil, err
	}
	out := map[string]*markup{}
	for _, r := range t.rows {
		typ := strings.ToLower(t.get(r, "family") + "." + t.get(r, "size"))
		m := &markup{text: t.get(r, "markup"), basis: t.get(r, "basis"), evidence: t.get(r, "evidence")}
		m.rate, err = decimal.NewFromString(m.text)
		if err != nil || m.rate.LessThan(decimal.NewFromInt(1)) || m.rate.GreaterThan(decimal.NewFromInt(3)) {
			return nil, t.errorf(r, "markup %q is not a number in [1, 3]", m.text)
		}
		if m.basis != "observed" && m.basis != "interpolated" {
			return nil, t.errorf(r, "basis %q is neither observed nor interpolated", m.basis)
		}
		if m.evidence == "" {
			return nil, t.errorf(r, "%s needs its evidence", typ)
		}
		if out[typ] != nil {
			return nil, t.errorf(r, "a second row for %s", typ)
		}
		out[typ] = m
	}
	return out, nil
}

type vertexUnitKey struct {
	task, resource, name, region string // lower case
}

type vertexUnit struct {
	price decimal.Decimal
	sku   string
}

// loadVertex adds vertex-ai/<task>/<machine> for every GCP GPU machine the
// catalog describes (N1 machines with their accelerators named as Vertex
// AI names them), with the machine's hardware, and prices it where
// vertex-ai-units.csv has the GPU, vCPU and RAM prices of its task, family
// and region: the sum of the three, Vertex AI's own SKUs, never the
// Compute Engine price.
func (l *loader) loadVertex() error {
	enumOf, err := l.loadVertexAccels()
	if err != nil {
		return err
	}
	units, regions, err := l.loadVertexUnits()
	if err != nil {
		return err
	}
	src, err := l.source(fileVertexUnits)
	if err != nil {
		return err
	}
	var vms []pricing.InstanceType
	for _, t := range l.c.types {
		if t.Provider == fleet.GCP && t.Service == "" && l.accels[strings.ToLower(t.GPUModel)].vendor != "google" {
			vms = append(vms, t)
		}
	}
	slices.SortFunc(vms, func(a, b pricing.InstanceType) int { return strings.Compare(a.Name, b.Name) })
	for _, vm := range vms {
		machine, enum, n := vm.Name, "", 0.0
		if host, gpu, count, ok := pricing.ParseAttachedTypeName(vm.Name); ok {
			if enum, ok = enumOf[strings.ToLower(gpu)]; !ok {
				continue
			}
			machine, n = host, count
		}
		for _, task := range pricing.VertexTasks {
			vt := vm
			vt.Name, vt.Service = pricing.VertexTypeName(task, machine, enum, n), fleet.VertexAI
			l.c.types[keyOf(fleet.GCP, vt.Name)] = vt
			for _, region := range regions {
				p := vertexPrice(vt, task, region, units, src)
				if p == nil {
					continue
				}
				if p.Hourly.GreaterThan(maxHourly) {
					return fmt.Errorf("%s: %s in %s sums to %s, above %s", fileVertexUnits, vt.Name, region, p.Hourly, maxHourly)
				}
				l.c.offers = append(l.c.offers, pricing.Offer{Type: vt, Region: region, OnDemand: p})
			}
		}
	}
	return nil
}

// vertexPrice is a Vertex AI machine's on-demand price per replica-hour in a
// region: its GPUs, vCPUs and GiB of RAM at the task's unit prices; nil
// where a unit price is missing.
func vertexPrice(t pricing.InstanceType, task, region string, units map[vertexUnitKey]vertexUnit, src sourceEntry) *pricing.Price {
	parts := []struct {
		resource, name, what string
		n                    float64
	}{
		{"gpu", t.GPUModel, t.GPUModel + " GPU", t.GPUCount},
		{"vcpu", t.Family, t.Family + " vCPU", t.VCPUs},
		{"memory", t.Family, t.Family + " RAM GiB", t.MemoryGiB},
	}
	sum := decimal.Zero
	var terms []string
	for _, p := range parts {
		u, ok := units[vertexUnitKey{task, p.resource, strings.ToLower(p.name), region}]
		if !ok || !(p.n > 0) {
			return nil
		}
		n := decimal.NewFromFloat(p.n)
		sum = sum.Add(u.price.Mul(n))
		terms = append(terms, fmt.Sprintf("%s %s × %s (SKU %s)", p.what, u.price, n, u.sku))
	}
	return &pricing.Price{
		Provider: fleet.GCP, Region: region, InstanceType: t.Name, Option: pricing.OnDemand,
		Hourly: sum.Round(pricePlaces), Currency: pricing.Currency, Unit: pricing.UnitHour,
		Source: fmt.Sprintf("%s: Vertex AI %s SKUs, %s; on demand, no management fee", src.label(), task, strings.Join(terms, " + ")),
		AsOf:   src.AsOf,
	}
}

// loadVertexAccels maps each GPU name to the Vertex AI accelerator type
// that names it (lower-case GPU name → enum).
func (l *loader) loadVertexAccels() (map[string]string, error) {
	t, err := readTable(l.fsys, fileVertexAccels, "acceleratorType", "gpuModel")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range t.rows {
		enum, gpu := t.get(r, "acceleratorType"), t.get(r, "gpuModel")
		if enum == "" || strings.ToUpper(enum) != enum || strings.ContainsAny(enum, "+ ") {
			return nil, t.errorf(r, "accelerator type %q is not an upper-case enum value", enum)
		}
		if _, ok := l.accels[strings.ToLower(gpu)]; !ok {
			return nil, t.errorf(r, "GPU %q has no row in %s", gpu, fileAccelerators)
		}
		if out[strings.ToLower(gpu)] != "" {
			return nil, t.errorf(r, "a second accelerator type for %s", gpu)
		}
		out[strings.ToLower(gpu)] = enum
	}
	return out, nil
}

// loadVertexUnits reads the unit prices and the regions they cover.
func (l *loader) loadVertexUnits() (map[vertexUnitKey]vertexUnit, []string, error) {
	t, err := readTable(l.fsys, fileVertexUnits, "task", "resource", "name", "region", "usdPerHour", "sku", "description")
	if err != nil {
		return nil, nil, err
	}
	out := map[vertexUnitKey]vertexUnit{}
	var regions []string
	for _, r := range t.rows {
		k := vertexUnitKey{
			strings.ToLower(t.get(r, "task")), strings.ToLower(t.get(r, "resource")),
			strings.ToLower(t.get(r, "name")), strings.ToLower(t.get(r, "region")),
		}
		if !slices.Contains(pricing.VertexTasks, k.task) {
			return nil, nil, t.errorf(r, "task %q is not one of %s", k.task, strings.Join(pricing.VertexTasks, ", "))
		}
		if k.resource != "gpu" && k.resource != "vcpu" && k.resource != "memory" {
			return nil, nil, t.errorf(r, "resource %q is not gpu, vcpu or memory", k.resource)
		}
		if k.name == "" || k.region == "" || t.get(r, "sku") == "" {
			return nil, nil, t.errorf(r, "a unit price needs a name, a region and its SKU")
		}
		d, err := decimal.NewFromString(t.get(r, "usdPerHour"))
		if err != nil || !d.IsPositive() || d.GreaterThan(maxHourly) {
			return nil, nil, t.errorf(r, "usdPerHour %q is not a positive price", t.get(r, "usdPerHour"))
		}
		if _, dup := out[k]; dup {
			return nil, nil, t.errorf(r, "a second %s %s price for %s in %s", k.task, k.resource, k.name, k.region)
		}
		out[k] = vertexUnit{d, t.get(r, "sku")}
		if !slices.Contains(regions, k.region) {
			regions = append(regions, k.region)
		}
	}
	return out, regions, nil
}
