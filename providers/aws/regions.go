package aws

// knownRegions are the AWS region codes gpufinops knows, so that a
// mistyped --region is an error naming the nearest (providers.RegInfo
// Regions); the embedded catalog's regions are among them (a test says
// so). A region newer than this list is scanned when set in the
// configuration (providers.aws.regions) instead of on the command line.
// The first is the one messages give as an example.
var knownRegions = []string{
	"us-east-1",
	"af-south-1",
	"ap-east-1", "ap-east-2",
	"ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
	"ap-south-1", "ap-south-2",
	"ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-6", "ap-southeast-7",
	"ca-central-1", "ca-west-1",
	"cn-north-1", "cn-northwest-1",
	"eu-central-1", "eu-central-2",
	"eu-north-1",
	"eu-south-1", "eu-south-2",
	"eu-west-1", "eu-west-2", "eu-west-3",
	"il-central-1",
	"me-central-1", "me-south-1",
	"mx-central-1",
	"sa-east-1",
	"us-east-2",
	"us-gov-east-1", "us-gov-west-1",
	"us-west-1", "us-west-2",
}
