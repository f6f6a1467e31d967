package sim

import "strings"

// regionNames are the Price List "location" names of AWS regions.
var regionNames = map[string]string{
	"us-east-1":      "US East (N. Virginia)",
	"us-east-2":      "US East (Ohio)",
	"us-west-1":      "US West (N. California)",
	"us-west-2":      "US West (Oregon)",
	"ca-central-1":   "Canada (Central)",
	"sa-east-1":      "South America (Sao Paulo)",
	"eu-west-1":      "EU (Ireland)",
	"eu-west-2":      "EU (London)",
	"eu-west-3":      "EU (Paris)",
	"eu-central-1":   "EU (Frankfurt)",
	"eu-central-2":   "EU (Zurich)",
	"eu-north-1":     "EU (Stockholm)",
	"eu-south-1":     "EU (Milan)",
	"eu-south-2":     "EU (Spain)",
	"ap-east-1":      "Asia Pacific (Hong Kong)",
	"ap-south-1":     "Asia Pacific (Mumbai)",
	"ap-south-2":     "Asia Pacific (Hyderabad)",
	"ap-northeast-1": "Asia Pacific (Tokyo)",
	"ap-northeast-2": "Asia Pacific (Seoul)",
	"ap-northeast-3": "Asia Pacific (Osaka)",
	"ap-southeast-1": "Asia Pacific (Singapore)",
	"ap-southeast-2": "Asia Pacific (Sydney)",
	"ap-southeast-3": "Asia Pacific (Jakarta)",
	"ap-southeast-4": "Asia Pacific (Melbourne)",
	"me-south-1":     "Middle East (Bahrain)",
	"me-central-1":   "Middle East (UAE)",
	"af-south-1":     "Africa (Cape Town)",
	"il-central-1":   "Israel (Tel Aviv)",
}

// regionLocation is a region's Price List location; unknown regions use
// their code.
func regionLocation(region string) string {
	if n, ok := regionNames[region]; ok {
		return n
	}
	return region
}

// regionPrefixes are the usage-type prefixes of AWS regions (USE1, EUW2, …).
var regionPrefixes = map[string]string{
	"us-east-1": "USE1", "us-east-2": "USE2", "us-west-1": "USW1", "us-west-2": "USW2",
	"ca-central-1": "CAN1", "sa-east-1": "SAE1",
	"eu-west-1": "EU", "eu-west-2": "EUW2", "eu-west-3": "EUW3", "eu-central-1": "EUC1",
	"eu-central-2": "EUC2", "eu-north-1": "EUN1", "eu-south-1": "EUS1", "eu-south-2": "EUS2",
	"ap-east-1": "APE1", "ap-south-1": "APS3", "ap-south-2": "APS5",
	"ap-northeast-1": "APN1", "ap-northeast-2": "APN2", "ap-northeast-3": "APN3",
	"ap-southeast-1": "APS1", "ap-southeast-2": "APS2", "ap-southeast-3": "APS6", "ap-southeast-4": "APS7",
	"me-south-1": "MES1", "me-central-1": "MEC1", "af-south-1": "AFS1", "il-central-1": "ILC1",
}

// regionPrefix is a region's usage-type prefix; unknown regions get one made
// of their parts' initials and number (xx-yyyy-9 → XXY9).
func regionPrefix(region string) string {
	if p, ok := regionPrefixes[region]; ok {
		return p
	}
	parts := strings.Split(region, "-")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i == 0:
			b.WriteString(strings.ToUpper(p))
		case i == len(parts)-1:
			b.WriteString(p)
		case p != "":
			b.WriteString(strings.ToUpper(p[:1]))
		}
	}
	return b.String()
}

// boxUsage is the usage type of a Linux instance hour: region-prefixed,
// except that the Price List writes us-east-1's without a prefix.
func boxUsage(region, instanceType string, priceList bool) string {
	if priceList && region == "us-east-1" {
		return "BoxUsage:" + instanceType
	}
	return regionPrefix(region) + "-BoxUsage:" + instanceType
}

// instanceFamily is the family of an instance type ("g5" of "g5.xlarge").
func instanceFamily(instanceType string) string {
	f, _, _ := strings.Cut(instanceType, ".")
	return f
}
