package azure

// knownRegions are the Azure region names (ARM locations) gpufinops
// knows, so that a mistyped --region is an error naming the nearest
// (providers.RegInfo Regions); the embedded catalog's regions are among
// them (a test says so). A region newer than this list is scanned when set
// in the configuration (providers.azure.regions) instead of on the command
// line.
// The first is the one messages give as an example.
var knownRegions = []string{
	"eastus",
	"australiacentral", "australiacentral2", "australiaeast", "australiasoutheast",
	"austriaeast", "belgiumcentral",
	"brazilsouth", "brazilsoutheast",
	"canadacentral", "canadaeast",
	"centralindia", "centralus",
	"chilecentral",
	"chinaeast", "chinaeast2", "chinaeast3", "chinanorth", "chinanorth2", "chinanorth3",
	"denmarkeast",
	"eastasia", "eastus2",
	"francecentral", "francesouth",
	"germanynorth", "germanywestcentral",
	"indonesiacentral",
	"israelcentral",
	"italynorth",
	"japaneast", "japanwest",
	"jioindiacentral", "jioindiawest",
	"koreacentral", "koreasouth",
	"malaysiawest",
	"mexicocentral",
	"newzealandnorth",
	"northcentralus", "northeurope",
	"norwayeast", "norwaywest",
	"polandcentral",
	"qatarcentral",
	"southafricanorth", "southafricawest",
	"southcentralus", "southeastasia", "southindia",
	"spaincentral",
	"swedencentral", "swedensouth",
	"switzerlandnorth", "switzerlandwest",
	"uaecentral", "uaenorth",
	"uksouth", "ukwest",
	"usgovarizona", "usgovtexas", "usgovvirginia",
	"westcentralus", "westeurope", "westindia",
	"westus", "westus2", "westus3",
}
