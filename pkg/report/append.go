package report

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
)

// appender writes the report's most numerous values (a recommendation, an
// instance, …) indented as json.MarshalIndent with a prefix and "  " and
// SetEscapeHTML(false) would, without reflection, into one reused buffer.
// ok turns false at anything it leaves to encoding/json (NaN, ±Inf, a decimal
// it does not format); its bytes are then to be thrown away and the value
// encoded by reflection, which also gives encoding/json's error.
type appender struct {
	b []byte
	// nl is a newline, the prefix and one indent per open object or array.
	nl []byte
	// first: nothing is written yet in the innermost open object or array.
	first bool
	ok    bool
	keys  []string
	// cur and scale cache the last currency's minor units, once scaled.
	cur    string
	scale  int32
	scaled bool
}

// reset starts a value at prefix, appended to dst.
func (a *appender) reset(dst []byte, prefix string) {
	a.b = dst
	a.nl = append(append(a.nl[:0], '\n'), prefix...)
	a.first = false
	a.ok = true
}

func (a *appender) open(c byte) {
	a.b = append(a.b, c)
	a.nl = append(a.nl, "  "...)
	a.first = true
}

func (a *appender) close(c byte) {
	a.nl = a.nl[:len(a.nl)-2]
	if !a.first {
		a.b = append(a.b, a.nl...)
	}
	a.b = append(a.b, c)
	a.first = false
}

// elem starts an array element.
func (a *appender) elem() {
	if !a.first {
		a.b = append(a.b, ',')
	}
	a.first = false
	a.b = append(a.b, a.nl...)
}

// key starts an object member named k, a name that needs no escaping.
func (a *appender) key(k string) {
	a.elem()
	a.b = append(a.b, '"')
	a.b = append(a.b, k...)
	a.b = append(a.b, '"', ':', ' ')
}

func (a *appender) null() { a.b = append(a.b, "null"...) }

func (a *appender) bool(v bool) { a.b = strconv.AppendBool(a.b, v) }

func (a *appender) int(v int) { a.b = strconv.AppendInt(a.b, int64(v), 10) }

// float writes v as encoding/json does: the shortest 'f' form, 'e' below
// 1e-6 and from 1e21 on with the exponent's leading zero dropped.
func (a *appender) float(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		a.ok = false
		return
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	a.b = strconv.AppendFloat(a.b, v, format, -1, 64)
	if format == 'e' {
		n := len(a.b)
		if n >= 4 && a.b[n-4] == 'e' && a.b[n-3] == '-' && a.b[n-2] == '0' {
			a.b[n-2] = a.b[n-1]
			a.b = a.b[:n-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes a string holds as they are: ASCII from the space
// on, but for the quote and the backslash.
var plain = func() (p [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
	}
	return p
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load8 is w's first eight bytes, little-endian.
func load8(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// special reports whether one of w's bytes is not plain.
func special(w uint64) bool {
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	control := (w - ones*' ') &^ w
	quote = (quote - ones) &^ quote
	backslash = (backslash - ones) &^ backslash
	return (control|quote|backslash|w)&highs != 0
}

// string writes s quoted as encoding/json does without HTML escaping:
// control characters, the quote and the backslash escaped, bytes that are
// not UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and \u2029.
func (a *appender) string(s string) {
	b := append(a.b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && !special(load8(s[i:i+8])) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	a.b = append(b, '"')
}

// strings writes a list of strings; nil is null.
func (a *appender) strings(ss []string) {
	if ss == nil {
		a.null()
		return
	}
	a.open('[')
	for _, s := range ss {
		a.elem()
		a.string(s)
	}
	a.close(']')
}

// floats writes a map with its keys sorted; nil is null.
func (a *appender) floats(m map[string]float64) {
	if m == nil {
		a.null()
		return
	}
	keys := a.keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	a.open('{')
	for _, k := range keys {
		a.elem()
		a.string(k)
		a.b = append(a.b, ':', ' ')
		a.float(m[k])
	}
	a.close('}')
	clear(keys)
	a.keys = keys[:0]
}

// pow10 holds the powers of ten an int64 holds.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// coefficient is d's coefficient, exponent and number of digits; the
// coefficient is d's when that has at most 18 digits.
func coefficient(d decimal.Decimal) (c int64, e, digits int) {
	return d.CoefficientInt64(), int(d.Exponent()), d.NumDigits()
}

// decimal writes c×10^e as decimal's String does (trim) or as its
// StringFixed(-e) does (not trim), e ≤ 0.
func (a *appender) decimal(c int64, e int, trim bool) {
	if e == 0 {
		a.b = strconv.AppendInt(a.b, c, 10)
		return
	}
	var buf [20]byte
	u := uint64(c)
	if c < 0 {
		a.b = append(a.b, '-')
		u = -u
	}
	digits := strconv.AppendUint(buf[:0], u, 10)
	n := -e
	frac, zeros := digits, n-len(digits)
	if len(digits) > n {
		a.b = append(a.b, digits[:len(digits)-n]...)
		frac, zeros = digits[len(digits)-n:], 0
	} else {
		a.b = append(a.b, '0')
	}
	if trim {
		i := len(frac)
		for i > 0 && frac[i-1] == '0' {
			i--
		}
		frac = frac[:i]
		if len(frac) == 0 {
			zeros = 0
		}
	}
	if zeros+len(frac) > 0 {
		a.b = append(a.b, '.')
		for range zeros {
			a.b = append(a.b, '0')
		}
		a.b = append(a.b, frac...)
	}
}

// number writes n as Number.MarshalJSON does: decimal's String, left to
// encoding/json where that is in scientific notation or the value needs
// more than 18 digits.
func (a *appender) number(n Number) {
	c, e, digits := coefficient(n.d)
	switch {
	case digits > 18 || decimal.UseScientificNotation && e > 0:
		a.ok = false
	case e > 0:
		if digits+e > 18 {
			a.ok = false
			return
		}
		a.b = strconv.AppendInt(a.b, c*pow10[e], 10)
	default:
		a.decimal(c, e, decimal.TrimTrailingZeros)
	}
}

// money writes m as Money.MarshalJSON does: decimal's StringFixed at the
// currency's minor units, rounding half away from zero; left to
// encoding/json where that needs more than 18 digits.
func (a *appender) money(m Money) {
	if !a.scaled || m.cur != a.cur {
		a.cur, a.scale, a.scaled = m.cur, money.Scale(m.cur), true
	}
	places := int(a.scale)
	c, e, digits := coefficient(m.d)
	switch {
	case digits > 18 || places < 0 || places > 18:
		a.ok = false
		return
	case e > -places:
		if digits+e+places > 18 {
			a.ok = false
			return
		}
		c *= pow10[e+places]
	case e < -places:
		if shift := -places - 1 - e; shift > 18 {
			c = 0
		} else {
			c /= pow10[shift]
		}
		if c < 0 {
			c -= 5
		} else {
			c += 5
		}
		c /= 10
	}
	a.decimal(c, -places, false)
}

func (a *appender) recommendation(r *Recommendation) {
	a.open('{')
	a.key("id")
	a.string(r.ID)
	a.key("resourceId")
	a.string(r.ResourceID)
	a.key("provider")
	a.string(r.Provider)
	a.optString("account", r.Account)
	a.key("region")
	a.string(r.Region)
	a.key("instanceType")
	a.string(r.InstanceType)
	a.key("kind")
	a.string(r.Kind)
	a.key("action")
	a.string(r.Action)
	a.optString("shortAction", r.ShortAction)
	a.optString("target", r.Target)
	a.key("currentMonthlyCost")
	a.money(r.CurrentMonthlyCost)
	a.key("projectedMonthlyCost")
	a.money(r.ProjectedMonthlyCost)
	a.key("monthlySavings")
	a.money(r.MonthlySavings)
	a.key("confidence")
	a.string(r.Confidence)
	a.key("risk")
	a.string(r.Risk)
	a.key("riskNotes")
	a.strings(r.RiskNotes)
	a.key("rationale")
	a.string(r.Rationale)
	a.key("evidence")
	a.evidence(&r.Evidence)
	a.optString("after", r.After)
	if p := r.Protected; p != nil {
		a.key("protected")
		a.open('{')
		a.key("reason")
		a.string(p.Reason)
		a.key("message")
		a.string(p.Message)
		a.optString("tag", p.Tag)
		a.key("potentialMonthlySavings")
		a.money(p.PotentialMonthlySavings)
		a.key("counted")
		a.bool(p.Counted)
		a.close('}')
	}
	if c := r.Change; c != nil {
		a.key("change")
		a.open('{')
		a.key("action")
		a.string(c.Action)
		if c.Replicas != nil {
			a.key("replicas")
			a.int(*c.Replicas)
		}
		a.optString("instanceType", c.InstanceType)
		a.optFloat("idleShutdownMinutes", c.IdleShutdownMinutes)
		a.close('}')
	}
	a.optString("command", r.Command)
	a.close('}')
}

func (a *appender) evidence(e *Evidence) {
	a.open('{')
	a.key("metrics")
	a.floats(e.Metrics)
	a.key("thresholds")
	a.floats(e.Thresholds)
	a.key("prices")
	if e.Prices == nil {
		a.null()
	} else {
		a.open('[')
		for i := range e.Prices {
			a.elem()
			a.price(&e.Prices[i])
		}
		a.close(']')
	}
	a.key("monthlyHoursBefore")
	a.float(e.MonthlyHoursBefore)
	a.key("monthlyHoursAfter")
	a.float(e.MonthlyHoursAfter)
	a.key("formula")
	a.string(e.Formula)
	a.key("notes")
	a.strings(e.Notes)
	if e.Purchase != nil {
		a.key("purchase")
		a.purchase(e.Purchase)
	}
	a.close('}')
}

func (a *appender) price(p *Price) {
	a.open('{')
	a.key("provider")
	a.string(p.Provider)
	a.key("region")
	a.string(p.Region)
	a.key("instanceType")
	a.string(p.InstanceType)
	a.key("option")
	a.string(p.Option)
	a.key("hourly")
	a.number(p.Hourly)
	a.key("currency")
	a.string(p.Currency)
	a.key("unit")
	a.string(p.Unit)
	a.optString("zone", p.Zone)
	a.key("source")
	a.string(p.Source)
	a.key("asOf")
	a.string(p.AsOf)
	a.close('}')
}

func (a *appender) purchase(p *Purchase) {
	a.open('{')
	a.key("kind")
	a.string(p.Kind)
	a.key("name")
	a.string(p.Name)
	a.key("term")
	a.string(p.Term)
	a.optString("payment", p.Payment)
	a.key("region")
	a.string(p.Region)
	a.key("scope")
	a.string(p.Scope)
	a.key("commitmentHourly")
	a.number(p.CommitmentHourly)
	a.key("coversOnDemandHourly")
	a.number(p.CoversOnDemandHourly)
	a.key("discountPercent")
	a.float(p.DiscountPercent)
	a.key("breakEvenUtilizationPercent")
	a.float(p.BreakEvenUtilizationPercent)
	if p.Quantity != 0 {
		a.key("quantity")
		a.int(p.Quantity)
	}
	a.optString("instanceType", p.InstanceType)
	if p.VCPUs != 0 {
		a.key("vcpus")
		a.float(p.VCPUs)
	}
	if p.MemoryGiB != 0 {
		a.key("memoryGiB")
		a.float(p.MemoryGiB)
	}
	if p.GPUs != 0 {
		a.key("gpus")
		a.float(p.GPUs)
	}
	a.optString("gpuModel", p.GPUModel)
	a.key("rateSource")
	a.string(p.RateSource)
	a.optString("rateOrigin", p.RateOrigin)
	a.optString("rateAsOf", p.RateAsOf)
	if p.Live {
		a.key("live")
		a.bool(p.Live)
	}
	a.optString("approximation", p.Approximation)
	a.close('}')
}

func (a *appender) instance(in *Instance) {
	a.open('{')
	a.key("resourceId")
	a.string(in.ResourceID)
	a.key("provider")
	a.string(in.Provider)
	a.optString("account", in.Account)
	a.key("region")
	a.string(in.Region)
	a.key("instanceType")
	a.string(in.InstanceType)
	a.optString("gpuModel", in.GPUModel)
	a.key("gpuCount")
	a.float(in.GPUCount)
	a.key("lifecycle")
	a.string(in.Lifecycle)
	a.key("state")
	a.string(in.State)
	a.key("monthlyHours")
	a.float(in.MonthlyHours)
	a.key("priced")
	a.bool(in.Priced)
	a.optString("utilizationSource", in.UtilizationSource)
	a.optFloat("utilizationCoverage", in.UtilizationCoverage)
	a.optFloat("gpuUtilP95", in.GPUUtilP95)
	if in.HourlyPrice != nil {
		a.key("hourlyPrice")
		a.price(in.HourlyPrice)
	}
	a.optString("priceBasis", in.PriceBasis)
	a.optMoney("commitmentMonthlyCost", in.CommitmentMonthlyCost)
	if in.CoveredShare != 0 {
		a.key("coveredShare")
		a.float(in.CoveredShare)
	}
	if len(in.CoveredBy) > 0 {
		a.key("coveredBy")
		a.strings(in.CoveredBy)
	}
	a.optMoney("currentMonthlyCost", in.CurrentMonthlyCost)
	a.optMoney("optimizedMonthlyCost", in.OptimizedMonthlyCost)
	a.optMoney("monthlySavings", in.MonthlySavings)
	if m := in.Managed; m != nil {
		a.key("managed")
		a.open('{')
		a.key("service")
		a.string(m.Service)
		a.key("kind")
		a.string(m.Kind)
		a.optString("name", m.Name)
		a.key("replicas")
		a.int(m.Replicas)
		a.close('}')
	}
	a.close('}')
}

func (a *appender) aiMetrics(m *InstanceAIMetrics) {
	a.open('{')
	a.key("resourceId")
	a.string(m.ResourceID)
	a.optString("model", m.Model)
	a.key("gpuCount")
	a.float(m.GPUCount)
	a.key("monthlyHours")
	a.float(m.MonthlyHours)
	a.optMoney("monthlyCost", m.MonthlyCost)
	a.key("paidGpuHours")
	a.float(m.PaidGPUHours)
	a.optFloat("gpuUtilAvg", m.GPUUtilAvg)
	a.optFloat("busyGpuHours", m.BusyGPUHours)
	a.optFloat("gpuEfficiencyPercent", m.GPUEfficiencyPercent)
	a.optMoney("costPerGpuHour", m.CostPerGPUHour)
	a.optMoney("costPerBusyGpuHour", m.CostPerBusyGPUHour)
	a.optFloat("tokensPerSecond", m.TokensPerSecond)
	a.optFloat("requestsPerSecond", m.RequestsPerSecond)
	a.optFloat("monthlyOutputTokens", m.MonthlyOutputTokens)
	a.optFloat("monthlyRequests", m.MonthlyRequests)
	a.optNumber("costPerMillionTokens", m.CostPerMillionTokens)
	a.optNumber("costPerThousandRequests", m.CostPerThousandRequests)
	a.optString("trainingRun", m.TrainingRun)
	a.close('}')
}

// optFloat writes an omitempty float pointer.
func (a *appender) optFloat(k string, v *float64) {
	if v != nil {
		a.key(k)
		a.float(*v)
	}
}

func (a *appender) tagViolation(v *TagViolation) {
	a.open('{')
	a.key("resourceId")
	a.string(v.ResourceID)
	a.key("compliant")
	a.bool(v.Compliant)
	a.key("missing")
	a.strings(v.Missing)
	a.key("invalid")
	a.strings(v.Invalid)
	a.key("caseMismatch")
	a.strings(v.CaseMismatch)
	a.optMoney("monthlyCost", v.MonthlyCost)
	a.close('}')
}

func (a *appender) warning(w *Warning) {
	a.open('{')
	a.optString("resourceId", w.ResourceID)
	a.key("code")
	a.string(w.Code)
	a.key("message")
	a.string(w.Message)
	if w.Scope != nil {
		a.key("scope")
		a.open('{')
		a.optString("provider", w.Scope.Provider)
		a.optString("account", w.Scope.Account)
		a.optString("region", w.Scope.Region)
		a.optString("source", w.Scope.Source)
		a.close('}')
	}
	a.optString("reason", w.Reason)
	if w.InstanceCount != 0 {
		a.key("instanceCount")
		a.int(w.InstanceCount)
	}
	if p := w.StalePrice; p != nil {
		a.key("stalePrice")
		a.open('{')
		a.key("kind")
		a.string(p.Kind)
		a.key("source")
		a.string(p.Source)
		a.key("asOf")
		a.string(p.AsOf)
		a.key("ageDays")
		a.int(p.AgeDays)
		a.key("limitDays")
		a.int(p.LimitDays)
		a.key("policyKey")
		a.string(p.PolicyKey)
		a.close('}')
	}
	a.close('}')
}

// optMoney writes an omitempty *Money.
func (a *appender) optMoney(k string, m *Money) {
	if m != nil {
		a.key(k)
		a.money(*m)
	}
}

// optNumber writes an omitempty *Number.
func (a *appender) optNumber(k string, n *Number) {
	if n != nil {
		a.key(k)
		a.number(*n)
	}
}

// optString writes an omitempty string.
func (a *appender) optString(k, v string) {
	if v != "" {
		a.key(k)
		a.string(v)
	}
}

// item appends v, a pointer to a type the appender knows, indented at
// prefix to dst; false when v is another type or the appender left it to
// encoding/json.
func (a *appender) item(dst []byte, v any, prefix string) ([]byte, bool) {
	a.reset(dst, prefix)
	switch v := v.(type) {
	case *Recommendation:
		a.recommendation(v)
	case *Instance:
		a.instance(v)
	case *InstanceAIMetrics:
		a.aiMetrics(v)
	case *TagViolation:
		a.tagViolation(v)
	case *Warning:
		a.warning(v)
	default:
		return a.b, false
	}
	return a.b, a.ok
}
