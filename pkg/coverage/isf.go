package coverage

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
)

// ISF is a table of instance size flexibility: for each VM size its
// flexibility group and its ratio within the group. A size-flexible
// reservation of one size covers the other sizes of its group, a VM of
// ratio r using r ÷ (the reserved size's ratio) of one reserved instance.
// It is the format Microsoft publishes (https://aka.ms/isf: columns
// InstanceSizeFlexibilityGroup, ArmSkuName, Ratio).
type ISF struct {
	sizes map[string]ISFSize
}

// ISFSize is one size's place in its flexibility group.
type ISFSize struct {
	Group string
	Ratio float64
	// Derived is true when the place comes from the size's name (see
	// DerivedISF), not from a published table.
	Derived bool
}

// MaxISFRows bounds the rows of an ISF table (Microsoft's has a few
// thousand).
const MaxISFRows = 100_000

// ParseISF reads an ISF table in Microsoft's CSV format: a header naming
// the columns InstanceSizeFlexibilityGroup, ArmSkuName and Ratio (any
// order, any case, other columns ignored), then one size a row. name is
// the file's name for errors, which give its line.
func ParseISF(r io.Reader, name string) (*ISF, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty: want a header InstanceSizeFlexibilityGroup,ArmSkuName,Ratio", name)
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	col := map[string]int{"instancesizeflexibilitygroup": -1, "armskuname": -1, "ratio": -1}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if j, ok := col[h]; ok {
			if j >= 0 {
				return nil, fmt.Errorf("%s:1: column %q twice", name, header[i])
			}
			col[h] = i
		}
	}
	for _, c := range []string{"InstanceSizeFlexibilityGroup", "ArmSkuName", "Ratio"} {
		if col[strings.ToLower(c)] < 0 {
			return nil, fmt.Errorf("%s:1: no %s column: want a header InstanceSizeFlexibilityGroup,ArmSkuName,Ratio", name, c)
		}
	}
	t := &ISF{sizes: map[string]ISFSize{}}
	lines := map[string]int{}
	for rows := 0; ; rows++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if rows >= MaxISFRows {
			return nil, fmt.Errorf("%s:%d: more than %d rows", name, line, MaxISFRows)
		}
		field := func(c string) (string, error) {
			i := col[c]
			if i >= len(rec) {
				return "", fmt.Errorf("%s:%d: %d fields, no %s", name, line, len(rec), c)
			}
			return strings.TrimSpace(rec[i]), nil
		}
		group, err := field("instancesizeflexibilitygroup")
		if err != nil {
			return nil, err
		}
		sku, err := field("armskuname")
		if err != nil {
			return nil, err
		}
		ratio, err := field("ratio")
		if err != nil {
			return nil, err
		}
		if group == "" || sku == "" {
			return nil, fmt.Errorf("%s:%d: empty group or size name", name, line)
		}
		v, perr := strconv.ParseFloat(ratio, 64)
		if perr != nil || !(v > 0) || math.IsInf(v, 0) || v > 1e6 {
			return nil, fmt.Errorf("%s:%d: ratio %q of %s is not a positive number", name, line, ratio, sku)
		}
		k := strings.ToLower(sku)
		if prev, ok := t.sizes[k]; ok {
			if prev.Group != group || prev.Ratio != v {
				return nil, fmt.Errorf("%s:%d: %s is listed again (line %d) with another group or ratio", name, line, sku, lines[k])
			}
			continue
		}
		t.sizes[k], lines[k] = ISFSize{Group: group, Ratio: v}, line
	}
	return t, nil
}

// ReadISFFile reads an ISF table from a file (ParseISF).
func ReadISFFile(path string) (*ISF, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	return ParseISF(f, path)
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %v", name, err)
}

// Len is how many sizes the table lists.
func (t *ISF) Len() int {
	if t == nil {
		return 0
	}
	return len(t.sizes)
}

// Lookup is the size's place in its group: from the table when it lists
// the size, else DerivedISF.
func (t *ISF) Lookup(size string) (ISFSize, bool) {
	if t != nil {
		if s, ok := t.sizes[strings.ToLower(size)]; ok {
			return s, true
		}
	}
	return DerivedISF(size)
}

// units says how many units of a flexible reservation of size reserved one
// instance-hour of typ uses, and one reserved instance buys: from the
// table when it lists the reserved size (typ then must be listed in the
// same group), else both derived. ok is false when typ is not in the
// reserved size's group.
func (t *ISF) units(reserved, typ string) (need, per float64, ok bool) {
	if strings.EqualFold(reserved, typ) {
		return 1, 1, true
	}
	var r, s ISFSize
	if t != nil {
		if r, ok = t.sizes[strings.ToLower(reserved)]; ok {
			s, ok = t.sizes[strings.ToLower(typ)]
			return s.Ratio, r.Ratio, ok && s.Group == r.Group
		}
	}
	if r, ok = DerivedISF(reserved); !ok {
		return 0, 0, false
	}
	s, ok = DerivedISF(typ)
	return s.Ratio, r.Ratio, ok && s.Group == r.Group
}

// DerivedISF places a GPU VM size (the N families: NC, ND, NG, NV) in a
// flexibility group from its name, where no published table is given:
// the group is the series, the same family letters, feature letters,
// accelerator and version (Standard_NC24ads_A100_v4, NC48ads and NC96ads
// are one group; NC4as_T4_v3 and NC64as_T4_v3 another; NV36adms_A10_v5 is
// not NV36ads_A10_v5's), and the ratio is the size's vCPUs, which is how
// Microsoft's published ratios run for these series (relative to the
// group's smallest size: only ratios between sizes are used). Constrained
// vCPU sizes (NC8-4…), promotional sizes and other families have none.
func DerivedISF(size string) (ISFSize, bool) {
	parts := strings.Split(size, "_")
	if len(parts) < 2 || len(parts) > 4 || !strings.EqualFold(parts[0], "standard") {
		return ISFSize{}, false
	}
	head := parts[1]
	i := 0
	for i < len(head) && isLetter(head[i]) {
		i++
	}
	fam := strings.ToUpper(head[:i])
	j := i
	for j < len(head) && head[j] >= '0' && head[j] <= '9' {
		j++
	}
	if len(fam) < 2 || fam[0] != 'N' || j == i || j-i > 4 || head[i] == '0' {
		return ISFSize{}, false
	}
	vcpus, _ := strconv.Atoi(head[i:j])
	feat := strings.ToLower(head[j:])
	for k := 0; k < len(feat); k++ {
		if !isLetter(feat[k]) {
			return ISFSize{}, false
		}
	}
	group := fam + feat
	rest := parts[2:]
	if n := len(rest); n == 2 && !isVersion(rest[1]) {
		return ISFSize{}, false
	}
	for _, p := range rest {
		if p == "" || strings.EqualFold(p, "promo") {
			return ISFSize{}, false
		}
		for k := 0; k < len(p); k++ {
			if !isLetter(p[k]) && (p[k] < '0' || p[k] > '9') {
				return ISFSize{}, false
			}
		}
		if isVersion(p) {
			group += "_" + strings.ToLower(p)
		} else {
			group += "_" + strings.ToUpper(p)
		}
	}
	return ISFSize{Group: group, Ratio: float64(vcpus), Derived: true}, true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isVersion reports whether p is a series version: v and digits.
func isVersion(p string) bool {
	if len(p) < 2 || p[0] != 'v' && p[0] != 'V' {
		return false
	}
	for k := 1; k < len(p); k++ {
		if p[k] < '0' || p[k] > '9' {
			return false
		}
	}
	return true
}
