package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// fastItems are the item types the appender writes, as pointers; it writes
// the struct types they hold too.
var fastItems = []any{&Recommendation{}, &Instance{}, &InstanceAIMetrics{}, &TagViolation{}, &Warning{}}

// encodingJSON is v as encoding/json writes it indented at prefix, the
// streamer's reference.
func encodingJSON(t testing.TB, v any, prefix string) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// streamedItem is v, a pointer, as the streamer writes a list item at
// prefix: through the appender, else by reflection.
func streamedItem(t testing.TB, v any, prefix string) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	s := &streamer{w: bufio.NewWriter(&b)}
	s.leaf(reflect.ValueOf(v).Elem(), prefix)
	if s.err != nil {
		return nil, s.err
	}
	if err := s.w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), nil
}

// checkFast fails unless the appender, where it writes v (a pointer), and
// the streamer write v as encoding/json does; it reports whether the
// appender wrote v.
func checkFast(t testing.TB, v any, prefix string) bool {
	t.Helper()
	ok, problem := compareFast(t, v, prefix)
	if problem != "" {
		t.Error(problem)
	}
	return ok
}

// compareFast is checkFast's comparison: what differs, or "".
func compareFast(t testing.TB, v any, prefix string) (bool, string) {
	t.Helper()
	want, wantErr := encodingJSON(t, v, prefix)
	var a appender
	fast, ok := a.item(nil, v, prefix)
	if ok && (wantErr != nil || !bytes.Equal(fast, want)) {
		return ok, fmt.Sprintf("appender's %T differs from encoding/json's (error %v)\n got: %s\nwant: %s", v, wantErr, fast, want)
	}
	got, err := streamedItem(t, v, prefix)
	switch {
	case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
		return ok, fmt.Sprintf("streamed %T: error %v, encoding/json's %v", v, err, wantErr)
	case err == nil && !bytes.Equal(got, want):
		return ok, fmt.Sprintf("streamed %T differs from encoding/json's\n got: %s\nwant: %s", v, got, want)
	}
	return ok, ""
}

// fieldPaths lists the exported fields reachable from t through structs,
// pointers and slices, as index paths, with their names for messages.
func fieldPaths(t reflect.Type, path []int, name string, out map[string][]int) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[Money]() || t == reflect.TypeFor[Number]() {
		if len(path) > 0 {
			out[name] = path
		}
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		p := append(append([]int(nil), path...), i)
		out[name+"."+f.Name] = p
		fieldPaths(f.Type, p, name+"."+f.Name, out)
	}
}

// field is the field at path in v, making the pointers and one-item slices
// on the way.
func field(v reflect.Value, path []int) reflect.Value {
	for _, i := range path {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				}
			} else if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			} else {
				v = v.Index(0)
			}
		}
		v = v.Field(i)
	}
	return v
}

// TestAppenderWritesEveryField: each field of the appender's types, set
// alone to a value that is not zero (and, for one that is a pointer or a
// list, to one that is zero), is written as encoding/json writes it. A field
// added to one of these types without the appender writing it fails here.
func TestAppenderWritesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, item := range fastItems {
		typ := reflect.TypeOf(item).Elem()
		paths := map[string][]int{}
		fieldPaths(typ, nil, typ.Name(), paths)
		if len(paths) == 0 {
			t.Fatalf("%s has no fields", typ)
		}
		for name, path := range paths {
			for _, mode := range []string{"set", "zero", "filled"} {
				v := reflect.New(typ)
				f := field(v.Elem(), path)
				switch mode {
				case "set":
					setNonZero(f)
				case "filled":
					fill(rng, f, 0)
				}
				ok, problem := compareFast(t, v.Interface(), "  ")
				if problem != "" {
					t.Errorf("the appender does not write %s (%s) as encoding/json does: %s", name, mode, problem)
				}
				if !ok && mode != "filled" {
					t.Errorf("the appender leaves %s (%s) to encoding/json", name, mode)
				}
			}
		}
	}
}

// setNonZero sets v to a value that is not its zero one.
func setNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setNonZero(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setNonZero(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		setNonZero(k)
		setNonZero(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		switch p := v.Addr().Interface().(type) {
		case *Money:
			*p = NewMoney(decimal.New(123, -2))
		case *Number:
			*p = NewNumber(decimal.New(1234, -3))
		default:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					setNonZero(v.Field(i))
				}
			}
		}
	}
}

var testStrings = []string{
	"", "x", "gpu-vm-0000001", "<a href='x'>&amp;</a>", "\u2028\u2029", "\x00\x01\x1f\x7f", "\xff", "a\xc3", "\xe2\x80",
	"é 日本 🚀", `"quoted" \back\slash/`, "\b\f\n\r\t", "\ufffd", "\u00ad\u200b", "line\u2028sep",
}

var testFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 2.5, -2.5, 730, 1e-6, 9.99999e-7, 1e-7, -1e-7, 1e20, 1e21, -1e21,
	123456789012345678, 1.0000000000000002, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1e-100, 1e100,
	33.333333333333336, float64(math.MaxInt64), 0.000001234,
}

// randomString is one of testStrings, random bytes, or runes, joined.
func randomString(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	case 1:
		var sb strings.Builder
		for range rng.IntN(8) {
			sb.WriteRune(rune(rng.IntN(0x30000)))
		}
		return sb.String()
	}
	return testStrings[rng.IntN(len(testStrings))] + testStrings[rng.IntN(len(testStrings))]
}

func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(3) {
	case 0:
		return testFloats[rng.IntN(len(testFloats))]
	case 1:
		return float64(rng.IntN(2000000)-1000000) / 100
	}
	return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
}

// randomDecimal is mostly a decimal with up to 16 digits and an exponent
// from -8 to 0, else (one in ten) one with up to 26 digits and an exponent from -12 to 3.
func randomDecimal(rng *rand.Rand) decimal.Decimal {
	digits, exp := rng.IntN(16), -rng.IntN(9)
	if rng.IntN(10) == 0 {
		digits, exp = rng.IntN(26), rng.IntN(16)-12
	}
	var sb strings.Builder
	if rng.IntN(3) == 0 {
		sb.WriteByte('-')
	}
	sb.WriteByte('0' + byte(rng.IntN(10)))
	for range digits {
		sb.WriteByte('0' + byte(rng.IntN(10)))
	}
	c := decimal.RequireFromString(sb.String())
	return decimal.NewFromBigInt(c.BigInt(), int32(exp))
}

// fill sets v to random values: nil, empty and full pointers, lists and
// maps, odd strings and floats, money at and off its minor units.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(rng))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if rng.IntN(3) == 0 {
			v.SetInt(0)
		} else {
			v.SetInt(rng.Int64N(1<<40) - 1<<39)
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(randomFloat(rng))
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(rng, v.Elem(), depth+1)
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + rng.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fill(rng, v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + rng.IntN(5) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(rng, k, depth+1)
				fill(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		switch p := v.Addr().Interface().(type) {
		case *Money:
			switch d := randomDecimal(rng); rng.IntN(12) {
			case 0:
				*p = Money{d: d}
			case 1:
				*p = NewMoneyIn(d, []string{"JPY", "KWD", "EUR"}[rng.IntN(3)])
			default:
				*p = NewMoney(d)
			}
		case *Number:
			*p = NewNumber(randomDecimal(rng))
		default:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() && rng.IntN(6) != 0 {
					fill(rng, v.Field(i), depth+1)
				}
			}
		}
	}
}

// TestAppenderMatchesEncodingJSON: random values of the appender's types
// are written as encoding/json writes them, at several prefixes, and the
// appender writes most of them itself.
func TestAppenderMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, item := range fastItems {
		typ := reflect.TypeOf(item).Elem()
		fast := 0
		const n = 3000
		for i := range n {
			v := reflect.New(typ)
			fill(rng, v.Elem(), 0)
			ok, problem := compareFast(t, v.Interface(), strings.Repeat(" ", i%7))
			if problem != "" {
				t.Fatalf("%s, value %d: %s", typ, i, problem)
			}
			if ok {
				fast++
			}
		}
		if fast < n/5 {
			t.Errorf("%s: the appender wrote %d of %d values", typ, fast, n)
		}
	}
}

// TestAppenderLeavesNaNToEncodingJSON: NaN and ±Inf are left to
// encoding/json, whose error the report returns.
func TestAppenderLeavesNaNToEncodingJSON(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, v := range []any{
			&Recommendation{Evidence: Evidence{Metrics: map[string]float64{"a": 1, "b": f}}},
			&Recommendation{Evidence: Evidence{MonthlyHoursAfter: f}},
			&Instance{GPUUtilP95: &f},
		} {
			var a appender
			if _, ok := a.item(nil, v, ""); ok {
				t.Errorf("the appender wrote %v in %T", f, v)
			}
			_, want := encodingJSON(t, v, "")
			_, err := streamedItem(t, v, "")
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("%T with %v: error %v, encoding/json's %v", v, f, err, want)
			}
		}
	}
}

// FuzzAppender: a recommendation and an instance made of the fuzzer's
// strings and numbers are written as encoding/json writes them.
func FuzzAppender(f *testing.F) {
	f.Add("id-1", "<b>&</b>", "gpuUtilP95", 12.5, 1e21, int64(12345), int8(-2), true)
	f.Add("\xff\u2028", "a\x00b", "", math.Copysign(0, -1), 1e-7, int64(-5), int8(0), false)
	f.Add("é", `"\`, "k", 100.0, 0.000001, int64(1)<<62, int8(3), true)
	f.Fuzz(func(t *testing.T, s1, s2, key string, f1, f2 float64, coef int64, exp int8, omit bool) {
		d := decimal.New(coef, int32(exp))
		m := NewMoney(d)
		p := Price{Provider: s1, Region: s2, InstanceType: key, Hourly: NewNumber(d), Zone: s2, AsOf: s1}
		rec := &Recommendation{
			ID: s1, ResourceID: s2, Account: key, Action: s1 + s2, CurrentMonthlyCost: m, MonthlySavings: Money{d: d},
			RiskNotes: []string{s1, s2}, Evidence: Evidence{
				Metrics: map[string]float64{key: f1, s1: f2}, Thresholds: map[string]float64{},
				Prices: []Price{p}, MonthlyHoursBefore: f1, Formula: s2,
				Purchase: &Purchase{Name: s1, CommitmentHourly: NewNumber(d), VCPUs: f2, Live: omit},
			},
		}
		in := &Instance{ResourceID: s1, GPUModel: s2, GPUCount: f1, MonthlyHours: f2, Priced: omit, CurrentMonthlyCost: &m}
		if omit {
			rec.RiskNotes, rec.Evidence.Purchase, rec.Evidence.Thresholds = nil, nil, nil
			in.HourlyPrice, in.GPUUtilP95 = &p, &f2
		}
		checkFast(t, rec, "  ")
		checkFast(t, in, "    ")
	})
}

// TestSpecial: a word is special exactly when one of its bytes is not plain.
func TestSpecial(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		var w uint64
		want := false
		for i := range 8 {
			c := byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				c = 'a' + byte(rng.IntN(26))
			}
			w |= uint64(c) << (8 * i)
			want = want || !plain[c]
		}
		if special(w) != want {
			t.Fatalf("special(%#x) = %v", w, !want)
		}
	}
	for c := range 256 {
		for i := range 8 {
			w := uint64(0x6161616161616161)&^(0xff<<(8*i)) | uint64(c)<<(8*i)
			if special(w) != !plain[c] {
				t.Errorf("special(%#x) = %v", w, plain[c])
			}
		}
	}
}

// TestWriteConsumedFallsBack: a recommendation or instance the appender
// leaves to encoding/json (a price of 30 digits, NaN) is written as
// encoding/json writes the whole report, or fails with its error.
func TestWriteConsumedFallsBack(t *testing.T) {
	meta := testMeta()
	long := decimal.RequireFromString("123456789012345678901234.567891")
	plans := map[string]func(p *recommend.Plan){
		"long price": func(p *recommend.Plan) { p.Recommendations[0].Evidence.Prices[0].Hourly = long },
		"long cost":  func(p *recommend.Plan) { p.Instances[0].MonthlyCost = long },
		"NaN": func(p *recommend.Plan) {
			p.Recommendations[1].Evidence.Metrics = map[string]float64{"a": 1, "nan": math.NaN()}
		},
	}
	for name, change := range plans {
		t.Run(name, func(t *testing.T) {
			plan := testPlan()
			change(&plan)
			var a appender
			r := New(plan, meta)
			if _, ok := a.item(nil, &r.Recommendations[0], ""); name == "long price" && ok {
				t.Fatal("the appender wrote the long price")
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			wantErr := enc.Encode(r)
			var got bytes.Buffer
			change(&plan)
			err := WriteConsumed(&got, &plan, meta)
			switch {
			case wantErr != nil:
				if err == nil || err.Error() != wantErr.Error() {
					t.Fatalf("error %v, encoding/json's %v", err, wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !bytes.Equal(got.Bytes(), want.Bytes()):
				t.Errorf("WriteConsumed differs from encoding/json:\n%s\nwant:\n%s", got.Bytes(), want.Bytes())
			}
		})
	}
}
