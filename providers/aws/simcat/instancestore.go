package simcat

// instanceStore is the local NVMe instance store of the GPU and accelerator
// types that have one, as DescribeInstanceTypes reports it
// (InstanceStorageInfo: total GB and disk count). Types not listed are
// EBS-only (p2, p3 but p3dn, g3, g5g, inf1, inf2, …). The simulator serves
// these; the adapter reads whatever DescribeInstanceTypes says.
var instanceStore = map[string][2]int{
	"g4dn.xlarge": {125, 1}, "g4dn.2xlarge": {225, 1}, "g4dn.4xlarge": {225, 1}, "g4dn.8xlarge": {900, 1},
	"g4dn.12xlarge": {900, 1}, "g4dn.16xlarge": {900, 1}, "g4dn.metal": {1800, 2},
	"g4ad.xlarge": {150, 1}, "g4ad.2xlarge": {300, 1}, "g4ad.4xlarge": {600, 1}, "g4ad.8xlarge": {1200, 1}, "g4ad.16xlarge": {2400, 2},
	"g5.xlarge": {250, 1}, "g5.2xlarge": {450, 1}, "g5.4xlarge": {600, 1}, "g5.8xlarge": {900, 1},
	"g5.12xlarge": {3800, 1}, "g5.16xlarge": {1900, 1}, "g5.24xlarge": {3800, 1}, "g5.48xlarge": {7600, 2},
	"g6.xlarge": {250, 1}, "g6.2xlarge": {450, 1}, "g6.4xlarge": {600, 1}, "g6.8xlarge": {900, 2},
	"g6.12xlarge": {3760, 4}, "g6.16xlarge": {1880, 2}, "g6.24xlarge": {3760, 4}, "g6.48xlarge": {7520, 8},
	"g6e.xlarge": {250, 1}, "g6e.2xlarge": {450, 1}, "g6e.4xlarge": {600, 1}, "g6e.8xlarge": {900, 1},
	"g6e.12xlarge": {3800, 2}, "g6e.16xlarge": {1900, 1}, "g6e.24xlarge": {3800, 2}, "g6e.48xlarge": {7600, 4},
	"gr6.4xlarge": {600, 1}, "gr6.8xlarge": {900, 2},
	"p3dn.24xlarge": {1800, 2},
	"p4d.24xlarge":  {8000, 8}, "p4de.24xlarge": {8000, 8},
	"p5.48xlarge": {30400, 8}, "p5e.48xlarge": {30400, 8}, "p5en.48xlarge": {30400, 8},
	"p6-b200.48xlarge": {30400, 8},
	"trn1.2xlarge":     {474, 1}, "trn1.32xlarge": {7600, 4}, "trn1n.32xlarge": {7600, 4}, "trn2.48xlarge": {7600, 4},
	"dl1.24xlarge": {4000, 4},
}
