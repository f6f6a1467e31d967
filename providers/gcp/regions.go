package gcp

// knownRegions are the Google Cloud region names gpufinops knows, so that
// a mistyped --region is an error naming the nearest (providers.RegInfo
// Regions); the embedded catalog's regions are among them (a test says
// so). A region newer than this list is scanned when set in the
// configuration (providers.gcp.regions) instead of on the command line.
// The first is the one messages give as an example.
var knownRegions = []string{
	"us-central1",
	"africa-south1",
	"asia-east1", "asia-east2",
	"asia-northeast1", "asia-northeast2", "asia-northeast3",
	"asia-south1", "asia-south2",
	"asia-southeast1", "asia-southeast2",
	"australia-southeast1", "australia-southeast2",
	"europe-central2",
	"europe-north1", "europe-north2",
	"europe-southwest1",
	"europe-west1", "europe-west2", "europe-west3", "europe-west4", "europe-west6",
	"europe-west8", "europe-west9", "europe-west10", "europe-west12",
	"me-central1", "me-central2", "me-west1",
	"northamerica-northeast1", "northamerica-northeast2", "northamerica-south1",
	"southamerica-east1", "southamerica-west1",
	"us-central2",
	"us-east1", "us-east4", "us-east5",
	"us-south1",
	"us-west1", "us-west2", "us-west3", "us-west4",
}
