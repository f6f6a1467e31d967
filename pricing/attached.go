package pricing

import (
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// AttachedTypeName names a machine type with GPUs attached to it, as GCP
// runs N1 machines ("n1-standard-8" with two nvidia-tesla-t4 as
// guestAccelerators): "n1-standard-8+2xT4". The catalog knows such a
// machine, and prices it in a region, under this name (host + GPUs).
func AttachedTypeName(machineType, gpuModel string, gpuCount float64) string {
	return machineType + "+" + strconv.FormatFloat(gpuCount, 'f', -1, 64) + "x" + gpuModel
}

// ParseAttachedTypeName splits a name made by AttachedTypeName; ok is false
// for any other name.
func ParseAttachedTypeName(name string) (machineType, gpuModel string, gpuCount float64, ok bool) {
	machineType, rest, found := strings.Cut(name, "+")
	if !found || machineType == "" {
		return "", "", 0, false
	}
	n, model, found := strings.Cut(rest, "x")
	if !found || model == "" {
		return "", "", 0, false
	}
	count, err := strconv.ParseFloat(n, 64)
	if err != nil || !(count > 0) || count > 1024 {
		return "", "", 0, false
	}
	return machineType, model, count, true
}

// TypeNameOf is the name the catalog knows an instance's type by: its
// instance type, or, where the catalog lacks that and the instance has GPUs
// attached (a GCP N1 machine with guestAccelerators), the attached name
// (AttachedTypeName) when the catalog knows that one. Otherwise the
// instance type is returned unchanged.
func TypeNameOf(cat Catalog, in *fleet.Instance) string {
	if cat == nil || in.InstanceType == "" {
		return in.InstanceType
	}
	if _, ok := cat.InstanceType(in.Provider, in.InstanceType); ok {
		return in.InstanceType
	}
	if in.GPU.Model == "" || !(in.GPU.Count > 0) {
		return in.InstanceType
	}
	name := AttachedTypeName(in.InstanceType, in.GPU.Model, in.GPU.Count)
	if _, ok := cat.InstanceType(in.Provider, name); ok {
		return name
	}
	return in.InstanceType
}
