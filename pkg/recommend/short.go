package recommend

import (
	"fmt"
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The short actions are written for a table column: a verb and the figure to
// act on, from the same values as the sentence in Action.

// hourlyShort is an hourly price in dollars: cents from $1 up, a tenth of a
// cent below, so a small spot price keeps its meaning.
func hourlyShort(h decimal.Decimal) string {
	if h.LessThan(decimal.NewFromInt(1)) {
		return "$" + h.StringFixed(3) + "/h"
	}
	return "$" + h.StringFixed(2) + "/h"
}

// minutesShort is a duration in whole minutes up to 90, else in hours: one
// decimal below 10 h, whole hours from there.
func minutesShort(m float64) string {
	switch {
	case m < 90:
		return num(math.Round(m)) + " min"
	case m < 600:
		return num(math.Round(m/6)/10) + " h"
	}
	return num(math.Round(m/60)) + " h"
}

// scheduleShort is a schedule as "Mon–Fri 08–18": whole hours, UTC implied.
func scheduleShort(ws []scheduleWindow) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s %02d–%02d", daysText(w.days), w.start, w.end)
	}
	return strings.Join(parts, ", ")
}

// ownerShort names an instance's owner: its name, else its kind.
func ownerShort(o *fleet.ManagedBy) string {
	if o.Name != "" {
		return o.Name
	}
	return string(o.Kind)
}

// commitmentShort abbreviates a commitment kind as people say it.
func commitmentShort(k pricing.CommitmentKind) string {
	switch k {
	case pricing.ComputeSavingsPlan:
		return "SP"
	case pricing.EC2InstanceSavingsPlan:
		return "EC2 SP"
	case pricing.StandardRI:
		return "RI"
	case pricing.ConvertibleRI:
		return "conv. RI"
	case pricing.CapacityBlock:
		return "capacity block"
	case pricing.Reservation:
		return "reservation"
	case pricing.ResourceCUD:
		return "CUD"
	case pricing.AzureSavingsPlan:
		return "savings plan"
	}
	return string(k)
}
