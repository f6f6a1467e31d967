package catalog

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The data files, relative to data/.
const (
	fileSources        = "sources.json"
	fileSourcesDoc     = "SOURCES.md"
	fileAccelerators   = "accelerators.csv"
	fileGPUs           = "gpus.csv"
	fileArch           = "arch.csv"
	fileCorrections    = "corrections.csv"
	fileGCPMachines    = "gcp-machine-types.csv"
	fileSpotAdvisor    = "aws-spot-advisor-gpu-linux.json"
	fileN1GPUs         = "gcp-n1-gpus.csv"
	fileTPUGenerations = "gcp-tpu-generations.csv"
	fileLifecycle      = "lifecycle.csv"
	fileRadarTrace     = "azure-gpu-eu-radar.trace.csv"
)

// fileKind says how a price extract's rows become offers.
type fileKind int

const (
	// kindWhole: one row is a whole priced type in a region.
	kindWhole fileKind = iota
	// kindGCPParts: SkyPilot's GCP rows, host rows and accelerator rows
	// summed per region.
	kindGCPParts
	// kindN1Hosts: GCP N1 host rows, each combined with the N1 GPU
	// configurations of gcp-n1-gpus.csv and the accelerator rows of
	// kindGCPParts into attached machines ("n1-standard-8+2xT4").
	kindN1Hosts
	// kindTPU: accelerator-only rows, one per TPU slice.
	kindTPU
)

// priceFile is one price extract.
type priceFile struct {
	provider fleet.Provider
	file     string
	kind     fileKind
}

// priceFiles are the price extracts. Within a provider they are listed in
// precedence order, highest first: where several files price the same
// (provider, type, region), the offer of the first file is taken whole
// (its on-demand and spot prices together) and the others' are superseded,
// each superseded offer whose prices differ reported as a correction. A
// type's hardware is the first file's too. docs/catalog.md gives the
// reasons:
//   - Azure: the EU radar file (Retail Prices API 2026-08-22, every cell
//     traced to its meter) before the all-regions file (2026-05-20) before
//     the SkyPilot US extract (undated).
//   - GCP: Cyclenerd's whole-VM Billing Catalog prices before SkyPilot's
//     host + accelerator sums (wrong for A100 machines in several regions).
//     N1 machines with attached GPUs and TPU slices come from one file each.
//   - AWS: the SkyPilot extract before the ec2instances.info previous
//     generation (they share no type).
var priceFiles = []priceFile{
	{fleet.AWS, "skypilot-aws-gpu.csv", kindWhole},
	{fleet.AWS, "aws-previous-gen-ec2instances.csv", kindWhole},
	{fleet.Azure, "azure-gpu-eu-radar.csv", kindWhole},
	{fleet.Azure, "azure-gpu-allregions.csv", kindWhole},
	{fleet.Azure, "skypilot-azure-gpu.csv", kindWhole},
	{fleet.GCP, "gcp-gpu-machines-cyclenerd.csv", kindWhole},
	{fleet.GCP, "skypilot-gcp-gpu.csv", kindGCPParts},
	{fleet.GCP, "gcp-n1-cyclenerd.csv", kindN1Hosts},
	{fleet.GCP, "gcp-tpu.csv", kindTPU},
}

// Precedence lists, for each provider, its price files highest precedence
// first (see priceFiles).
func Precedence(p fleet.Provider) []string {
	var out []string
	for _, pf := range priceFiles {
		if pf.provider == p {
			out = append(out, pf.file)
		}
	}
	return out
}

// unpriced is the corrections.csv "to" value that removes a price.
const unpriced = "unpriced"

// accelPrefix marks a GCP accelerator row (which has no instance type) in
// corrections.csv and in reported corrections: "accelerator:H100x8".
const accelPrefix = "accelerator:"

const defaultArch = "x86_64"

// sourceEntry is one element of sources.json.
type sourceEntry struct {
	File       string `json:"file"`
	Name       string `json:"name"`
	Provider   string `json:"provider,omitempty"`
	Label      string `json:"label,omitempty"`
	Repository string `json:"repository,omitempty"`
	Path       string `json:"path,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Origin     string `json:"origin,omitempty"`
	AsOf       string `json:"asOf"`
	Note       string `json:"note,omitempty"`
}

func (s sourceEntry) origin() string {
	if s.Origin != "" {
		return s.Origin
	}
	return s.Repository + ", " + s.Path + " @" + s.Commit
}

func (s sourceEntry) label() string {
	if s.Label != "" {
		return s.Label
	}
	return s.Name
}

type accelInfo struct {
	name      string
	vendor    string
	memoryGiB float64
	sameAs    string
	notes     string
}

// rule is one row of corrections.csv.
type rule struct {
	line         int
	provider     fleet.Provider
	instanceType string
	accelName    string
	accelCount   float64
	isAccel      bool
	region       string
	field        string
	from, to     string
	reason       string
	matched      int
}

// priceRow is one row of a price extract, as text, so corrections can be
// applied to the values exactly as the source wrote them.
type priceRow struct {
	file     string
	line     int
	provider fleet.Provider
	typ      string
	accel    string
	count    string
	vcpus    string
	memGiB   string
	gpuMiB   string
	region   string
	zone     string
	price    string
	spot     string
}

func (r *priceRow) field(name string) *string {
	switch name {
	case "AcceleratorCount":
		return &r.count
	case "vCPUs":
		return &r.vcpus
	case "MemoryGiB":
		return &r.memGiB
	case "GpuMemoryMiB":
		return &r.gpuMiB
	case "Price":
		return &r.price
	case "SpotPrice":
		return &r.spot
	}
	return nil
}

// subject names the row in corrections: its instance type, or for a GCP
// accelerator row "accelerator:<name>x<count>".
func (r *priceRow) subject() string {
	if r.typ != "" {
		return r.typ
	}
	n, err := strconv.ParseFloat(r.count, 64)
	if err != nil {
		return accelPrefix + r.accel + "x" + r.count
	}
	return accelPrefix + r.accel + "x" + formatFloat(n)
}

func (r *priceRow) where() string { return fmt.Sprintf("%s:%d", r.file, r.line) }

type loader struct {
	fsys    fs.FS
	sources map[string]sourceEntry
	accels  map[string]accelInfo // key: lower-case name
	arch    map[typeKey]string   // key: provider + family
	rules   []*rule
	c       *catalog

	// The price files' state while they load (see loadPrices).
	claimed     map[offerKey]claim
	typeFile    map[typeKey]string
	hwNoted     map[string]bool
	superseded  map[string]int             // file → offers a file of higher precedence took
	sourceFiles []string                   // the data file of each l.c.sources entry
	rounded     map[string]map[string]bool // file → "line option" of each price rounded
	incomplete  []incomplete
	lifecycle   []*lifeRule
	gcpAccels   map[accelKey]*priceRow
	gcpAccelMiB map[string]string
	gcpAccelSrc sourceEntry
}

// load reads every data file from fsys and builds the catalog.
func load(fsys fs.FS) (*catalog, error) {
	l := &loader{
		fsys: fsys,
		c: &catalog{
			gpus:       map[string]pricing.GPUSpec{},
			types:      map[typeKey]pricing.InstanceType{},
			offerIndex: map[offerKey]int{},
			advice:     map[offerKey]pricing.SpotAdvice{},
		},
	}
	steps := []func() error{
		l.loadSources, l.loadAccelerators, l.loadGPUs, l.loadArch, l.loadRules,
		l.loadPrices, l.loadSpotAdvice, l.loadCommitments, l.loadManaged,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	for _, r := range l.rules {
		if r.matched == 0 {
			return nil, fmt.Errorf("%s:%d: correction of %s %s %s from %q matches no row (stale?)",
				fileCorrections, r.line, r.provider, r.subject(), r.field, r.from)
		}
	}
	if err := l.staleLifecycle(); err != nil {
		return nil, err
	}
	l.finish()
	return l.c, nil
}

func (r *rule) subject() string {
	if r.isAccel {
		return accelPrefix + r.accelName + "x" + formatFloat(r.accelCount)
	}
	return r.instanceType
}

func (l *loader) loadSources() error {
	b, err := fs.ReadFile(l.fsys, fileSources)
	if err != nil {
		return err
	}
	var entries []sourceEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return fmt.Errorf("%s: %w", fileSources, err)
	}
	l.sources = map[string]sourceEntry{}
	for i, e := range entries {
		if e.File == "" || e.Name == "" || e.AsOf == "" {
			return fmt.Errorf("%s: entry %d needs file, name and asOf", fileSources, i)
		}
		if e.Origin == "" && (e.Repository == "" || e.Path == "" || e.Commit == "") {
			return fmt.Errorf("%s: %s needs an origin, or repository, path and commit", fileSources, e.File)
		}
		l.sources[e.File] = e
		l.sourceFiles = append(l.sourceFiles, e.File)
		l.c.sources = append(l.c.sources, pricing.Source{
			Name: e.Name, Provider: e.Provider, Origin: e.origin(), AsOf: e.AsOf, Note: e.Note,
		})
	}
	dir, err := fs.ReadDir(l.fsys, ".")
	if err != nil {
		return err
	}
	for _, d := range dir {
		if n := d.Name(); n != fileSources && n != fileSourcesDoc {
			if _, ok := l.sources[n]; !ok {
				return fmt.Errorf("%s: no entry for data file %s", fileSources, n)
			}
		}
	}
	return nil
}

func (l *loader) source(file string) (sourceEntry, error) {
	s, ok := l.sources[file]
	if !ok {
		return s, fmt.Errorf("%s: no entry for data file %s", fileSources, file)
	}
	return s, nil
}

func (l *loader) loadAccelerators() error {
	t, err := readTable(l.fsys, fileAccelerators, "name", "vendor", "memory_gib", "same_as", "notes")
	if err != nil {
		return err
	}
	l.accels = map[string]accelInfo{}
	for _, r := range t.rows {
		a := accelInfo{
			name: t.get(r, "name"), vendor: t.get(r, "vendor"),
			sameAs: t.get(r, "same_as"), notes: t.get(r, "notes"),
		}
		if a.name == "" || a.vendor == "" {
			return t.errorf(r, "name and vendor are required")
		}
		if a.memoryGiB, err = optFloat(t.get(r, "memory_gib")); err != nil {
			return t.errorf(r, "memory_gib: %v", err)
		}
		l.accels[strings.ToLower(a.name)] = a
	}
	return nil
}

func (l *loader) loadGPUs() error {
	t, err := readTable(l.fsys, fileGPUs, "gpu", "memory_gib", "memory_bandwidth_gbs",
		"fp16_tflops_dense", "int8_tops_dense", "mig_profiles", "source", "notes")
	if err != nil {
		return err
	}
	for _, r := range t.rows {
		g := pricing.GPUSpec{Name: t.get(r, "gpu"), Source: t.get(r, "source"), Notes: t.get(r, "notes")}
		a, ok := l.accels[strings.ToLower(g.Name)]
		if !ok {
			return t.errorf(r, "%s has no row in %s (its maker)", g.Name, fileAccelerators)
		}
		g.Vendor = a.vendor
		if g.MemoryGiB, err = optFloat(t.get(r, "memory_gib")); err != nil {
			return t.errorf(r, "memory_gib: %v", err)
		}
		if g.MemoryBandwidthGBs, err = optFloat(t.get(r, "memory_bandwidth_gbs")); err != nil {
			return t.errorf(r, "memory_bandwidth_gbs: %v", err)
		}
		if g.FP16TFLOPS, err = optFloatPtr(t.get(r, "fp16_tflops_dense")); err != nil {
			return t.errorf(r, "fp16_tflops_dense: %v", err)
		}
		if g.INT8TOPS, err = optFloatPtr(t.get(r, "int8_tops_dense")); err != nil {
			return t.errorf(r, "int8_tops_dense: %v", err)
		}
		if g.MIGProfiles, err = parseMIGProfiles(t.get(r, "mig_profiles")); err != nil {
			return t.errorf(r, "mig_profiles: %v", err)
		}
		l.c.gpus[strings.ToLower(g.Name)] = g
	}
	src, err := l.source(fileAccelerators)
	if err != nil {
		return err
	}
	// Accelerators without a row in gpus.csv get a spec of their own from
	// accelerators.csv, then the aliases (same_as) take the spec of the GPU
	// they name, in gpus.csv or accelerators.csv.
	for key, a := range l.accels {
		if _, ok := l.c.gpus[key]; ok || a.sameAs != "" {
			continue
		}
		l.c.gpus[key] = pricing.GPUSpec{
			Name: a.name, Vendor: a.vendor, MemoryGiB: a.memoryGiB, Source: src.origin(), Notes: a.notes,
		}
	}
	for key, a := range l.accels {
		if _, ok := l.c.gpus[key]; ok || a.sameAs == "" {
			continue
		}
		g, ok := l.c.gpus[strings.ToLower(a.sameAs)]
		if !ok {
			return fmt.Errorf("%s: %s is the same as %s, which neither %s nor %s describes", fileAccelerators, a.name, a.sameAs, fileGPUs, fileAccelerators)
		}
		l.c.gpus[key] = g
	}
	return nil
}

// parseMIGProfiles reads "1g.5gb;1g.5gb+me;7g.40gb" into profiles.
func parseMIGProfiles(s string) ([]pricing.MIGProfile, error) {
	if s == "" {
		return nil, nil
	}
	var out []pricing.MIGProfile
	for _, name := range strings.Split(s, ";") {
		name = strings.TrimSpace(name)
		base, me := strings.CutSuffix(name, "+me")
		slices, mem, ok := strings.Cut(base, ".")
		n, errN := strconv.Atoi(strings.TrimSuffix(slices, "g"))
		gb, errM := strconv.ParseFloat(strings.TrimSuffix(mem, "gb"), 64)
		if !ok || !strings.HasSuffix(slices, "g") || !strings.HasSuffix(mem, "gb") || errN != nil || errM != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a profile like 3g.40gb or 1g.10gb+me", name)
		}
		out = append(out, pricing.MIGProfile{Name: name, Slices: n, MemoryGB: gb, MediaExtensions: me})
	}
	return out, nil
}

func (l *loader) loadArch() error {
	t, err := readTable(l.fsys, fileArch, "provider", "family", "arch")
	if err != nil {
		return err
	}
	l.arch = map[typeKey]string{}
	for _, r := range t.rows {
		p := fleet.Provider(t.get(r, "provider"))
		if !p.Valid() {
			return t.errorf(r, "provider %q is not one of aws, azure, gcp", p)
		}
		l.arch[keyOf(p, t.get(r, "family"))] = t.get(r, "arch")
	}
	return nil
}

func (l *loader) loadRules() error {
	t, err := readTable(l.fsys, fileCorrections, "provider", "instanceType", "region", "field", "from", "to", "reason")
	if err != nil {
		return err
	}
	for _, r := range t.rows {
		ru := &rule{
			line:         r.line,
			provider:     fleet.Provider(t.get(r, "provider")),
			instanceType: t.get(r, "instanceType"),
			region:       t.get(r, "region"),
			field:        t.get(r, "field"),
			from:         t.get(r, "from"),
			to:           t.get(r, "to"),
			reason:       t.get(r, "reason"),
		}
		if !ru.provider.Valid() {
			return t.errorf(r, "provider %q is not one of aws, azure, gcp", ru.provider)
		}
		if ru.instanceType == "" || ru.region == "" || ru.reason == "" {
			return t.errorf(r, "instanceType, region (or *) and reason are required")
		}
		if (&priceRow{}).field(ru.field) == nil {
			return t.errorf(r, "field %q is not a correctable column", ru.field)
		}
		isPrice := ru.field == "Price" || ru.field == "SpotPrice"
		if ru.to == unpriced && !isPrice {
			return t.errorf(r, "only Price and SpotPrice can become %q", unpriced)
		}
		if ru.to != unpriced {
			if _, err := decimal.NewFromString(ru.to); err != nil {
				return t.errorf(r, "to %q is not a number or %q", ru.to, unpriced)
			}
		}
		if name, ok := strings.CutPrefix(ru.instanceType, accelPrefix); ok {
			i := strings.LastIndex(name, "x")
			n, err := strconv.ParseFloat(name[i+1:], 64)
			if i <= 0 || err != nil {
				return t.errorf(r, "%q is not like accelerator:H100x8", ru.instanceType)
			}
			ru.isAccel, ru.accelName, ru.accelCount = true, name[:i], n
		}
		l.rules = append(l.rules, ru)
	}
	return nil
}

func (ru *rule) applies(row *priceRow) bool {
	if ru.provider != row.provider || (ru.region != "*" && !strings.EqualFold(ru.region, row.region)) {
		return false
	}
	if !ru.isAccel {
		return row.typ != "" && strings.EqualFold(ru.instanceType, row.typ)
	}
	if row.typ != "" || !strings.EqualFold(ru.accelName, row.accel) {
		return false
	}
	n, err := strconv.ParseFloat(row.count, 64)
	return err == nil && n == ru.accelCount
}

// sameValue compares two cells as numbers when both are numbers.
func sameValue(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	x, errA := decimal.NewFromString(a)
	y, errB := decimal.NewFromString(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return x.Equal(y)
}

func (l *loader) correct(row *priceRow, field, from, to, reason string) {
	l.c.corrections = append(l.c.corrections, pricing.Correction{
		Provider: row.provider, InstanceType: row.subject(), Region: row.region,
		Field: field, From: from, To: to, Reason: reason,
	})
}

// claim is the offer a (provider, type, region) got from the first file
// that priced it.
type claim struct {
	file string
	od   *pricing.Price
}

// incomplete is a whole row without hardware (no GPU count, vCPUs or
// memory), kept until every file is read: it is offered only if another row
// gives its type's hardware.
type incomplete struct {
	row *priceRow
	src sourceEntry
}

func (l *loader) loadPrices() error {
	l.claimed = map[offerKey]claim{}
	l.rounded = map[string]map[string]bool{}
	l.typeFile = map[typeKey]string{}
	l.hwNoted = map[string]bool{}
	if err := l.loadLifecycle(); err != nil {
		return err
	}
	for _, pf := range priceFiles {
		rows, err := l.readPriceRows(pf.provider, pf.file)
		if err != nil {
			return err
		}
		src, err := l.source(pf.file)
		if err != nil {
			return err
		}
		if pf.kind == kindTPU {
			// A TPU slice is sold by its accelerator name: that is its type.
			for _, r := range rows {
				if r.typ != "" || r.accel == "" {
					return fmt.Errorf("%s: a TPU row names a slice (AcceleratorName) and no instance type", r.where())
				}
				r.typ = r.accel
			}
		}
		// Empty prices stay unpriced (nil), never zero. Checked before the
		// explicit corrections so a removed price is reported once.
		for _, r := range rows {
			if r.price == "" {
				l.correct(r, "Price", "", unpriced, "the source has no on-demand price here; the offer is unpriced, never zero")
			}
			if r.spot == "" {
				l.correct(r, "SpotPrice", "", unpriced, "the source has no spot price here; the offer has no spot price, never zero")
			}
		}
		for _, r := range rows {
			for _, ru := range l.rules {
				if !ru.applies(r) {
					continue
				}
				cell := r.field(ru.field)
				if !sameValue(*cell, ru.from) {
					continue
				}
				ru.matched++
				orig := *cell
				if ru.to == unpriced {
					*cell = ""
				} else {
					*cell = ru.to
				}
				l.correct(r, ru.field, orig, ru.to, ru.reason)
			}
		}
		switch pf.kind {
		case kindGCPParts:
			err = l.buildGCP(rows, src)
		case kindN1Hosts:
			err = l.buildN1(rows, src)
		case kindTPU:
			err = l.buildTPU(rows, src)
		default:
			err = l.buildWhole(rows, src)
		}
		if err != nil {
			return err
		}
	}
	if err := l.buildIncomplete(); err != nil {
		return err
	}
	for i, e := range l.sourceFiles {
		if n := l.superseded[e]; n > 0 {
			note := fmt.Sprintf("%d offers superseded by files of higher precedence (docs/catalog.md)", n)
			if l.c.sources[i].Note != "" {
				note = l.c.sources[i].Note + " " + note
			}
			l.c.sources[i].Note = note
		}
	}
	for _, pf := range priceFiles {
		if n := len(l.rounded[pf.file]); n > 0 {
			l.c.corrections = append(l.c.corrections, pricing.Correction{
				Provider: pf.provider, Field: "Price", From: "more than 6 decimal places", To: "6 decimal places",
				Reason: fmt.Sprintf("%s: %d prices carry floating-point noise of the source's arithmetic (e.g. 88.4899999025753); held at the catalog's precision of 6 decimal places", pf.file, n),
			})
		}
	}
	return nil
}

func (l *loader) readPriceRows(p fleet.Provider, file string) ([]*priceRow, error) {
	t, err := readTable(l.fsys, file, "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs",
		"MemoryGiB", "GpuMemoryMiB", "Region", "AvailabilityZone", "Price", "SpotPrice")
	if err != nil {
		return nil, err
	}
	rows := make([]*priceRow, len(t.rows))
	all := make([]priceRow, len(t.rows))
	col := func(name string) int { return t.cols[name] }
	iType, iAccel, iCount, iVCPUs := col("InstanceType"), col("AcceleratorName"), col("AcceleratorCount"), col("vCPUs")
	iMem, iGPU, iRegion, iZone := col("MemoryGiB"), col("GpuMemoryMiB"), col("Region"), col("AvailabilityZone")
	iPrice, iSpot := col("Price"), col("SpotPrice")
	for i, r := range t.rows {
		f := func(c int) string { return strings.TrimSpace(r.rec[c]) }
		pr := &all[i]
		*pr = priceRow{
			file: file, line: r.line, provider: p,
			typ: f(iType), accel: f(iAccel), count: f(iCount), vcpus: f(iVCPUs),
			memGiB: f(iMem), gpuMiB: f(iGPU), region: f(iRegion), zone: f(iZone),
			price: f(iPrice), spot: f(iSpot),
		}
		if pr.region == "" || (pr.typ == "" && pr.accel == "") {
			return nil, fmt.Errorf("%s: a row needs a region and an instance type or accelerator", pr.where())
		}
		rows[i] = pr
	}
	return rows, nil
}

// buildWhole builds offers from rows that are each a whole priced type. A
// row without its hardware waits for buildIncomplete.
func (l *loader) buildWhole(rows []*priceRow, src sourceEntry) error {
	for _, r := range rows {
		if r.typ == "" {
			return fmt.Errorf("%s: a %s row needs an instance type", r.where(), r.provider)
		}
		if r.accel == "" || r.count == "" || r.vcpus == "" || r.memGiB == "" {
			l.incomplete = append(l.incomplete, incomplete{r, src})
			continue
		}
		count, err := reqFloat(r, "AcceleratorCount", r.count)
		if err != nil {
			return err
		}
		if count == 0 {
			return fmt.Errorf("%s: AcceleratorCount is 0: a GPU type has a GPU or a part of one", r.where())
		}
		gpuMem, err := l.gpuMemory(r, r.gpuMiB, r.accel)
		if err != nil {
			return err
		}
		t, err := l.hostType(r, familyOf(r.provider, r.typ))
		if err != nil {
			return err
		}
		t.GPUModel, t.GPUCount, t.GPUMemoryGiB = r.accel, count, gpuMem
		if t, err = l.addType(r, t); err != nil {
			return err
		}
		if err := l.offerRow(r, t, src); err != nil {
			return err
		}
	}
	return nil
}

// offerRow prices a whole row and offers it.
func (l *loader) offerRow(r *priceRow, t pricing.InstanceType, src sourceEntry) error {
	od, err := l.price(r, r.price, "", pricing.OnDemand, src, src.label())
	if err != nil {
		return err
	}
	spot, err := l.price(r, r.spot, r.zone, pricing.Spot, src, src.label())
	if err != nil {
		return err
	}
	return l.addOffer(r, t, od, l.noDiscount(r, t.Name, od, spot))
}

// buildIncomplete offers the rows without hardware whose type another row
// describes (the same type has the same hardware), and leaves the others
// out: a GPU count is never guessed.
func (l *loader) buildIncomplete() error {
	for _, in := range l.incomplete {
		r := in.row
		t, ok := l.c.types[keyOf(r.provider, r.typ)]
		if !ok {
			l.correct(r, "Offer", "incomplete row", "not offered", fmt.Sprintf(
				"the source gives no GPU model, GPU count, vCPUs or memory for %s and no other row describes it; a GPU count is never guessed", r.typ))
			continue
		}
		l.correct(r, "Hardware", "none", describeHardware(t), fmt.Sprintf(
			"the source gives no GPU count, vCPUs or memory here; the hardware is %s's, from %s", r.typ, l.typeFile[keyOf(r.provider, r.typ)]))
		if err := l.offerRow(r, t, in.src); err != nil {
			return err
		}
	}
	return nil
}

type gcpMachine struct {
	accel string
	count float64
}

type accelKey struct {
	name   string // lower case
	count  float64
	region string
}

// buildGCP joins each GCP host row to the accelerator row of its region: the
// full price is the sum of the two, and a machine lacking either part in a
// region is not offered there. The accelerator rows are kept for buildN1.
func (l *loader) buildGCP(rows []*priceRow, src sourceEntry) error {
	machines, err := l.loadGCPMachines()
	if err != nil {
		return err
	}
	accels := map[accelKey]*priceRow{}
	accelMiB := map[string]string{}
	var hosts []*priceRow
	for _, r := range rows {
		if r.typ != "" {
			hosts = append(hosts, r)
			continue
		}
		n, err := reqFloat(r, "AcceleratorCount", r.count)
		if err != nil {
			return err
		}
		k := accelKey{strings.ToLower(r.accel), n, r.region}
		if accels[k] != nil {
			return fmt.Errorf("%s: a second %s row for %s", r.where(), r.subject(), r.region)
		}
		accels[k] = r
		if accelMiB[k.name] == "" {
			accelMiB[k.name] = r.gpuMiB
		}
	}
	l.gcpAccels, l.gcpAccelMiB, l.gcpAccelSrc = accels, accelMiB, src
	label := src.label() + ", host+accelerator"
	for _, h := range hosts {
		m, ok := machines[strings.ToLower(h.typ)]
		if !ok {
			return fmt.Errorf("%s: GCP machine type %s has no row in %s", h.where(), h.typ, fileGCPMachines)
		}
		gpuMem, err := l.gpuMemory(h, accelMiB[strings.ToLower(m.accel)], m.accel)
		if err != nil {
			return err
		}
		t, err := l.hostType(h, familyOf(fleet.GCP, h.typ))
		if err != nil {
			return err
		}
		t.GPUModel, t.GPUCount, t.GPUMemoryGiB = m.accel, m.count, gpuMem
		if t, err = l.addType(h, t); err != nil {
			return err
		}
		a := accels[accelKey{strings.ToLower(m.accel), m.count, h.region}]
		if a == nil {
			if _, done := l.claimed[offerKeyOf(fleet.GCP, h.region, h.typ)]; !done {
				l.correct(h, "Offer", "host row only", "not offered", fmt.Sprintf(
					"no %s×%s accelerator row in this region; a GCP machine is priced only with both parts",
					m.accel, formatFloat(m.count)))
			}
			continue
		}
		if err := l.offerSum(h, a, t, src, label); err != nil {
			return err
		}
	}
	return nil
}

// offerSum offers a machine priced as host + accelerator rows.
func (l *loader) offerSum(h, a *priceRow, t pricing.InstanceType, src sourceEntry, label string) error {
	od, err := l.sumPrice(h, a, h.price, a.price, "", pricing.OnDemand, src, label)
	if err != nil {
		return err
	}
	zone := h.zone
	if a.zone != h.zone {
		zone = h.zone + "+" + a.zone
	}
	spot, err := l.sumPrice(h, a, h.spot, a.spot, zone, pricing.Spot, src, label)
	if err != nil {
		return err
	}
	for _, p := range []*pricing.Price{od, spot} {
		if p != nil {
			p.InstanceType = t.Name
		}
	}
	return l.addOffer(h, t, od, l.noDiscount(h, t.Name, od, spot))
}

// n1GPU is one row of gcp-n1-gpus.csv: a GPU configuration an N1 machine
// can attach, and the largest machine that can take it.
type n1GPU struct {
	accel               string
	count               float64
	maxVCPUs, maxMemGiB float64
}

func (l *loader) loadN1GPUs() ([]n1GPU, error) {
	t, err := readTable(l.fsys, fileN1GPUs, "acceleratorName", "acceleratorCount", "maxVCPUs", "maxMemoryGiB")
	if err != nil {
		return nil, err
	}
	var out []n1GPU
	for _, r := range t.rows {
		g := n1GPU{accel: t.get(r, "acceleratorName")}
		for col, v := range map[string]*float64{"acceleratorCount": &g.count, "maxVCPUs": &g.maxVCPUs, "maxMemoryGiB": &g.maxMemGiB} {
			f, err := finiteFloat(t.get(r, col))
			if err != nil || f <= 0 {
				return nil, t.errorf(r, "%s %q is not a positive number", col, t.get(r, col))
			}
			*v = f
		}
		if _, ok := l.accels[strings.ToLower(g.accel)]; !ok {
			return nil, t.errorf(r, "accelerator %q has no row in %s", g.accel, fileAccelerators)
		}
		out = append(out, g)
	}
	return out, nil
}

// buildN1 offers GCP N1 machines with GPUs attached: each N1 host row with
// each GPU configuration it can take (gcp-n1-gpus.csv), where SkyPilot's
// GCP file prices that GPU configuration in the region. The price is host +
// GPUs; the name is pricing.AttachedTypeName ("n1-standard-8+2xT4").
func (l *loader) buildN1(rows []*priceRow, src sourceEntry) error {
	gpus, err := l.loadN1GPUs()
	if err != nil {
		return err
	}
	accSrc := l.gcpAccelSrc
	label := src.label() + " (N1 host) + " + accSrc.label() + " (GPUs)"
	for _, h := range rows {
		if !strings.HasPrefix(strings.ToLower(h.typ), "n1-") || h.accel != "" {
			return fmt.Errorf("%s: an N1 host row needs an n1- machine type and no accelerator", h.where())
		}
		host, err := l.hostType(h, familyOf(fleet.GCP, h.typ))
		if err != nil {
			return err
		}
		for _, g := range gpus {
			if host.VCPUs > g.maxVCPUs || host.MemoryGiB > g.maxMemGiB {
				continue
			}
			a := l.gcpAccels[accelKey{strings.ToLower(g.accel), g.count, h.region}]
			if a == nil {
				continue
			}
			gpuMem, err := l.gpuMemory(h, l.gcpAccelMiB[strings.ToLower(g.accel)], g.accel)
			if err != nil {
				return err
			}
			t := host
			t.Name = pricing.AttachedTypeName(h.typ, g.accel, g.count)
			t.GPUModel, t.GPUCount, t.GPUMemoryGiB = g.accel, g.count, gpuMem
			if t, err = l.addType(h, t); err != nil {
				return err
			}
			if err := l.offerSum(h, a, t, src, label); err != nil {
				return err
			}
		}
	}
	return nil
}

type tpuGeneration struct {
	prefix, model string
	coresPerChip  float64
}

// buildTPU offers GCP TPU slices: one row per slice, priced whole. The
// slice's chips are its GPUs (tpu-v5p-8: 8 TensorCores, 4 chips).
func (l *loader) buildTPU(rows []*priceRow, src sourceEntry) error {
	t, err := readTable(l.fsys, fileTPUGenerations, "prefix", "gpuModel", "coresPerChip")
	if err != nil {
		return err
	}
	var gens []tpuGeneration
	for _, r := range t.rows {
		g := tpuGeneration{prefix: t.get(r, "prefix"), model: t.get(r, "gpuModel")}
		if g.coresPerChip, err = finiteFloat(t.get(r, "coresPerChip")); err != nil || g.coresPerChip <= 0 {
			return t.errorf(r, "coresPerChip %q is not a positive number", t.get(r, "coresPerChip"))
		}
		if _, ok := l.accels[strings.ToLower(g.model)]; !ok {
			return t.errorf(r, "TPU %q has no row in %s", g.model, fileAccelerators)
		}
		gens = append(gens, g)
	}
	for _, r := range rows {
		i := strings.LastIndexByte(r.accel, '-')
		cores, err := strconv.Atoi(r.accel[i+1:])
		if i <= 0 || err != nil || cores <= 0 {
			return fmt.Errorf("%s: TPU slice %q does not end in its TensorCore or chip count", r.where(), r.accel)
		}
		prefix := r.accel[:i]
		var gen *tpuGeneration
		for j := range gens {
			if strings.EqualFold(gens[j].prefix, prefix) {
				gen = &gens[j]
			}
		}
		if gen == nil {
			return fmt.Errorf("%s: TPU generation %q has no row in %s", r.where(), prefix, fileTPUGenerations)
		}
		chips := math.Max(1, float64(cores)/gen.coresPerChip)
		if chips > fleet.MaxGPUsPerInstance {
			l.correct(r, "Offer", "slice of "+formatFloat(chips)+" chips", "not offered", fmt.Sprintf(
				"a multi-host slice larger than one instance can hold (%d GPUs or chips): an estate runs it as several TPU VMs, so it is not an instance type",
				fleet.MaxGPUsPerInstance))
			continue
		}
		typ := pricing.InstanceType{
			Provider: fleet.GCP, Name: r.accel, Family: prefix, GPUModel: gen.model,
			GPUCount:     chips,
			GPUMemoryGiB: l.c.gpus[strings.ToLower(gen.model)].MemoryGiB, Arch: defaultArch,
		}
		if typ, err = l.addType(r, typ); err != nil {
			return err
		}
		if err := l.offerRow(r, typ, src); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) loadGCPMachines() (map[string]gcpMachine, error) {
	t, err := readTable(l.fsys, fileGCPMachines, "machineType", "acceleratorName", "acceleratorCount")
	if err != nil {
		return nil, err
	}
	out := map[string]gcpMachine{}
	for _, r := range t.rows {
		n, err := strconv.ParseFloat(t.get(r, "acceleratorCount"), 64)
		if err != nil || n <= 0 {
			return nil, t.errorf(r, "acceleratorCount %q is not a positive number", t.get(r, "acceleratorCount"))
		}
		out[strings.ToLower(t.get(r, "machineType"))] = gcpMachine{t.get(r, "acceleratorName"), n}
	}
	return out, nil
}

// hostType reads the host part of a row: vCPUs, memory, family and arch.
func (l *loader) hostType(r *priceRow, family string) (pricing.InstanceType, error) {
	vcpus, err := reqFloat(r, "vCPUs", r.vcpus)
	if err != nil {
		return pricing.InstanceType{}, err
	}
	mem, err := reqFloat(r, "MemoryGiB", r.memGiB)
	if err != nil {
		return pricing.InstanceType{}, err
	}
	arch := l.arch[keyOf(r.provider, family)]
	if arch == "" {
		arch = defaultArch
	}
	return pricing.InstanceType{
		Provider: r.provider, Name: r.typ, Family: family, VCPUs: vcpus, MemoryGiB: mem, Arch: arch,
	}, nil
}

// gpuMemory is per GPU: the row's GpuMemoryMiB, else the GPU table's figure.
func (l *loader) gpuMemory(r *priceRow, mib, accel string) (float64, error) {
	if _, ok := l.accels[strings.ToLower(accel)]; !ok {
		return 0, fmt.Errorf("%s: accelerator %q has no row in %s (its maker)", r.where(), accel, fileAccelerators)
	}
	if mib != "" {
		v, err := strconv.ParseFloat(mib, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%s: GpuMemoryMiB %q is not a number", r.where(), mib)
		}
		return v / 1024, nil
	}
	return l.c.gpus[strings.ToLower(accel)].MemoryGiB, nil
}

// addType records a type's hardware and returns the type as the catalog
// holds it. Every row of one file must agree; a later file that disagrees
// is reported (field Hardware) and the first file's hardware is kept.
func (l *loader) addType(r *priceRow, t pricing.InstanceType) (pricing.InstanceType, error) {
	k := keyOf(t.Provider, t.Name)
	if prev, ok := l.c.types[k]; ok {
		bare := prev
		bare.Retired, bare.Promo = "", ""
		if l.sameHardware(bare, t) {
			return prev, nil
		}
		first := l.typeFile[k]
		if first == r.file {
			return prev, fmt.Errorf("%s: %s %s hardware differs from an earlier row (%+v vs %+v)", r.where(), t.Provider, t.Name, t, bare)
		}
		if note := first + "|" + r.file + "|" + k.name; !l.hwNoted[note] {
			l.hwNoted[note] = true
			l.correct(r, "Hardware", describeHardware(t), describeHardware(prev), fmt.Sprintf(
				"%s describes %s otherwise; the hardware of %s (higher precedence) is kept", r.file, t.Name, first))
		}
		return prev, nil
	}
	l.applyLifecycle(&t)
	l.c.types[k] = t
	l.typeFile[k] = r.file
	return t, nil
}

// sameHardware compares two descriptions of a type; GPU names that are
// aliases of one GPU (accelerators.csv same_as) agree.
func (l *loader) sameHardware(a, b pricing.InstanceType) bool {
	if !strings.EqualFold(a.GPUModel, b.GPUModel) && l.canonicalGPU(a.GPUModel) != l.canonicalGPU(b.GPUModel) {
		return false
	}
	a.GPUModel, b.GPUModel = "", ""
	return a == b
}

// canonicalGPU follows same_as to the GPU a name means, lower case.
func (l *loader) canonicalGPU(name string) string {
	k := strings.ToLower(name)
	for range 4 {
		a, ok := l.accels[k]
		if !ok || a.sameAs == "" {
			break
		}
		k = strings.ToLower(a.sameAs)
	}
	return k
}

func describeHardware(t pricing.InstanceType) string {
	return fmt.Sprintf("%s×%s %sGiB, %s vCPU, %s GiB", formatFloat(t.GPUCount), t.GPUModel,
		formatFloat(t.GPUMemoryGiB), formatFloat(t.VCPUs), formatFloat(t.MemoryGiB))
}

// addOffer offers t in the row's region, unless a file of higher precedence
// already did (then the superseded offer is reported when its on-demand
// price differs). A second row for the same type and region in one file is
// an error.
func (l *loader) addOffer(r *priceRow, t pricing.InstanceType, od, spot *pricing.Price) error {
	k := offerKeyOf(t.Provider, r.region, t.Name)
	if prev, ok := l.claimed[k]; ok {
		if prev.file == r.file {
			return fmt.Errorf("%s: a second row for %s %s in %s", r.where(), t.Provider, t.Name, r.region)
		}
		if !samePrice(prev.od, od) {
			l.c.corrections = append(l.c.corrections, pricing.Correction{
				Provider: t.Provider, InstanceType: t.Name, Region: r.region, Field: "Price",
				From: priceText(od), To: priceText(prev.od),
				Reason: fmt.Sprintf("%s's price is superseded by %s's (file precedence, see docs/catalog.md)", r.file, prev.file),
			})
		}
		l.superseded[r.file]++
		return nil
	}
	l.claimed[k] = claim{file: r.file, od: od}
	l.c.offers = append(l.c.offers, pricing.Offer{Type: t, Region: r.region, OnDemand: od, Spot: spot})
	return nil
}

func samePrice(a, b *pricing.Price) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Hourly.Equal(b.Hourly)
}

func priceText(p *pricing.Price) string {
	if p == nil {
		return unpriced
	}
	return p.Hourly.String()
}

// noDiscount applies the generic rule: a spot price at or above the on-demand
// price means no spot discount is offered, so there is no spot price.
func (l *loader) noDiscount(r *priceRow, name string, od, spot *pricing.Price) *pricing.Price {
	if od == nil || spot == nil || spot.Hourly.LessThan(od.Hourly) {
		return spot
	}
	c := pricing.Correction{
		Provider: r.provider, InstanceType: name, Region: r.region, Field: "SpotPrice",
		From: spot.Hourly.String(), To: unpriced,
		Reason: fmt.Sprintf("spot price is not below the on-demand price (%s): no spot discount offered", od.Hourly),
	}
	l.c.corrections = append(l.c.corrections, c)
	return nil
}

func (l *loader) price(r *priceRow, v, zone string, opt pricing.Option, src sourceEntry, label string) (*pricing.Price, error) {
	if v == "" {
		return nil, nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil || d.IsNegative() || d.GreaterThan(maxHourly) {
		return nil, fmt.Errorf("%s: %s price %q is not a number in [0, %s]", r.where(), opt, v, maxHourly)
	}
	if d.Exponent() < -pricePlaces {
		// Float noise of the source's own arithmetic (88.4899999025753):
		// held at the catalog's precision, and reported once per file.
		d = d.Round(pricePlaces)
		if l.rounded[r.file] == nil {
			l.rounded[r.file] = map[string]bool{}
		}
		l.rounded[r.file][fmt.Sprintf("%d %s", r.line, opt)] = true
	}
	return &pricing.Price{
		Provider: r.provider, Region: r.region, InstanceType: r.typ, Option: opt, Hourly: d,
		Currency: pricing.Currency, Unit: pricing.UnitHour, Zone: zone, Source: label, AsOf: src.AsOf,
	}, nil
}

// pricePlaces is the catalog's precision: a price is held to 6 decimal
// places (docs/catalog.md).
const pricePlaces = 6

// maxHourly bounds a catalog price: no instance-hour costs more (the
// largest TPU slices list about 2,000 USD).
var maxHourly = decimal.NewFromInt(100000)

func (l *loader) sumPrice(host, acc *priceRow, hv, av, zone string, opt pricing.Option, src sourceEntry, label string) (*pricing.Price, error) {
	h, err := l.price(host, hv, zone, opt, src, label)
	if err != nil {
		return nil, err
	}
	a, err := l.price(acc, av, zone, opt, src, label)
	if err != nil || h == nil || a == nil {
		return nil, err
	}
	h.Hourly = h.Hourly.Add(a.Hourly)
	return h, nil
}

func (l *loader) loadSpotAdvice() error {
	src, err := l.source(fileSpotAdvisor)
	if err != nil {
		return err
	}
	b, err := fs.ReadFile(l.fsys, fileSpotAdvisor)
	if err != nil {
		return err
	}
	var feed struct {
		Ranges []struct {
			Index int    `json:"index"`
			Label string `json:"label"`
			Max   int    `json:"max"`
		} `json:"ranges"`
		SpotAdvisor map[string]map[string]map[string]struct {
			S int `json:"s"`
			R int `json:"r"`
		} `json:"spot_advisor"`
	}
	if err := json.Unmarshal(b, &feed); err != nil {
		return fmt.Errorf("%s: %w", fileSpotAdvisor, err)
	}
	type band struct {
		label string
		max   int
	}
	bands := map[int]band{}
	for _, r := range feed.Ranges {
		bands[r.Index] = band{r.Label, r.Max}
	}
	label := src.label()
	for region, byOS := range feed.SpotAdvisor {
		for typ, e := range byOS["Linux"] {
			b, ok := bands[e.R]
			if !ok {
				return fmt.Errorf("%s: %s %s has band %d, which ranges lacks", fileSpotAdvisor, region, typ, e.R)
			}
			l.c.advice[offerKeyOf(fleet.AWS, region, typ)] = pricing.SpotAdvice{
				SavingsPercent: e.S, Band: b.label, BandIndex: e.R, MaxInterruptPercent: b.max,
				Source: label, AsOf: src.AsOf,
			}
		}
	}
	return nil
}

// finish sorts the offers and corrections and indexes the offers.
func (l *loader) finish() {
	c := l.c
	slices.SortFunc(c.offers, func(a, b pricing.Offer) int {
		return cmp.Or(
			cmp.Compare(a.Type.Provider, b.Type.Provider),
			cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.Type.Name, b.Type.Name),
		)
	})
	for i, o := range c.offers {
		c.offerIndex[offerKeyOf(o.Type.Provider, o.Region, o.Type.Name)] = i
	}
	slices.SortStableFunc(c.corrections, func(a, b pricing.Correction) int {
		return cmp.Or(
			cmp.Compare(a.Provider, b.Provider),
			cmp.Compare(a.InstanceType, b.InstanceType),
			cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.Field, b.Field),
		)
	})
}

// familyOf names a type's family: "g5" for g5.xlarge, "a2-highgpu" for
// a2-highgpu-1g, "NCads_A100_v4" for Standard_NC24ads_A100_v4.
func familyOf(p fleet.Provider, name string) string {
	switch p {
	case fleet.AWS:
		f, _, _ := strings.Cut(name, ".")
		return f
	case fleet.GCP:
		parts := strings.SplitN(name, "-", 3)
		if len(parts) < 3 {
			return name
		}
		return parts[0] + "-" + parts[1]
	case fleet.Azure:
		s := strings.TrimPrefix(name, "Standard_")
		i := 0
		for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
			i++
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return s[:i] + s[j:]
	}
	return name
}

// table is a CSV file read with its header.
type table struct {
	file string
	cols map[string]int
	rows []tableRow
}

type tableRow struct {
	line int
	rec  []string
}

func readTable(fsys fs.FS, file string, required ...string) (*table, error) {
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(b))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", file, err)
	}
	t := &table{file: file, cols: make(map[string]int, len(header))}
	for i, h := range header {
		t.cols[strings.TrimSpace(h)] = i
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s: no %q column", file, c)
		}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, tableRow{line, rec})
	}
	return t, nil
}

func (t *table) get(r tableRow, col string) string { return strings.TrimSpace(r.rec[t.cols[col]]) }

func (t *table) errorf(r tableRow, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", t.file, r.line, fmt.Sprintf(format, args...))
}

// rowLimits bound a row's hardware: a larger value is not a machine but a
// typo or a unit mix-up.
var rowLimits = map[string]float64{
	"AcceleratorCount": fleet.MaxGPUsPerInstance,
	"vCPUs":            4096,
	"MemoryGiB":        65536,
}

func reqFloat(r *priceRow, col, v string) (float64, error) {
	f, err := finiteFloat(v)
	if limit, ok := rowLimits[col]; err != nil || f < 0 || ok && f > limit {
		return 0, fmt.Errorf("%s: %s %q is not a non-negative number up to %g", r.where(), col, v, rowLimits[col])
	}
	return f, nil
}

func optFloat(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	return finiteFloat(s)
}

// finiteFloat is strconv.ParseFloat without NaN and the infinities, which it
// takes: a catalog cell holds a finite number.
func finiteFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("%q is not a finite number", s)
	}
	return v, err
}

func optFloatPtr(s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	v, err := finiteFloat(s)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
