// Command trim writes the trimmed botocore service models that
// providers/aws/sim/models embeds: only the operations the simulators serve
// and the shapes they reach, without documentation, plus their paginators.
//
//	go run ./providers/aws/sim/models/trim -botocore /path/to/botocore/checkout
//
// The checkout is a git clone of github.com/boto/botocore; the models are
// read from its HEAD commit, which the README names.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// services are the botocore models trimmed: the file name written, the
// botocore data directory and the operations kept.
var services = []struct {
	name, dir string
	ops       []string
}{
	{"ec2", "ec2/2016-11-15", []string{"DescribeRegions", "DescribeInstances", "DescribeInstanceTypes", "DescribeSpotPriceHistory", "StopInstances", "DescribeReservedInstances", "DescribeCapacityReservations", "DescribeSpotInstanceRequests"}},
	{"sts", "sts/2011-06-15", []string{"GetCallerIdentity", "AssumeRole"}},
	{"monitoring", "cloudwatch/2010-08-01", []string{"ListMetrics", "GetMetricData"}},
	{"pricing", "pricing/2017-10-15", []string{"GetProducts", "DescribeServices"}},
	{"savingsplans", "savingsplans/2019-06-28", []string{"DescribeSavingsPlansOfferingRates", "DescribeSavingsPlans"}},
	{"athena", "athena/2017-05-18", []string{"StartQueryExecution", "GetQueryExecution", "GetQueryResults"}},
	{"sagemaker", "sagemaker/2017-07-24", []string{"ListEndpoints", "DescribeEndpoint", "DescribeEndpointConfig", "ListNotebookInstances", "DescribeNotebookInstance", "StopNotebookInstance", "ListApps", "ListTrainingJobs", "DescribeTrainingJob", "ListProcessingJobs", "DescribeProcessingJob", "ListTags"}},
}

func main() {
	repo := flag.String("botocore", "", "git directory of a botocore clone")
	out := flag.String("out", "providers/aws/sim/models", "directory to write")
	flag.Parse()
	if *repo == "" {
		log.Fatal("trim: -botocore is required")
	}
	commit := strings.TrimSpace(string(git(*repo, "rev-parse", "HEAD")))
	for _, s := range services {
		var model map[string]any
		must(json.Unmarshal(git(*repo, "show", "HEAD:botocore/data/"+s.dir+"/service-2.json"), &model))
		var pages map[string]any
		must(json.Unmarshal(git(*repo, "show", "HEAD:botocore/data/"+s.dir+"/paginators-1.json"), &pages))
		trimmed := trim(model, pages, s.ops)
		trimmed["x-source"] = fmt.Sprintf("github.com/boto/botocore@%s botocore/data/%s/service-2.json and paginators-1.json", commit, s.dir)
		b, err := json.MarshalIndent(trimmed, "", " ")
		must(err)
		must(os.WriteFile(filepath.Join(*out, s.name+".json"), append(b, '\n'), 0o644))
	}
	fmt.Println("botocore", commit)
}

// trim keeps ops, the shapes they reach and their paginators; documentation
// is dropped.
func trim(model, pages map[string]any, ops []string) map[string]any {
	allOps := model["operations"].(map[string]any)
	shapes := model["shapes"].(map[string]any)
	keptOps := map[string]any{}
	keptShapes := map[string]any{}
	var reach func(name string)
	reach = func(name string) {
		if _, ok := keptShapes[name]; ok {
			return
		}
		sh, ok := shapes[name].(map[string]any)
		if !ok {
			log.Fatalf("trim: no shape %s", name)
		}
		sh = undocumented(sh)
		keptShapes[name] = sh
		for _, k := range []string{"member", "key", "value"} {
			if ref, ok := sh[k].(map[string]any); ok {
				reach(ref["shape"].(string))
			}
		}
		if ms, ok := sh["members"].(map[string]any); ok {
			for _, m := range ms {
				reach(m.(map[string]any)["shape"].(string))
			}
		}
	}
	for _, name := range ops {
		op, ok := allOps[name].(map[string]any)
		if !ok {
			log.Fatalf("trim: no operation %s", name)
		}
		op = undocumented(op)
		keptOps[name] = op
		for _, k := range []string{"input", "output"} {
			if ref, ok := op[k].(map[string]any); ok {
				reach(ref["shape"].(string))
			}
		}
		if errs, ok := op["errors"].([]any); ok {
			for _, e := range errs {
				reach(e.(map[string]any)["shape"].(string))
			}
		}
	}
	keptPages := map[string]any{}
	if all, ok := pages["pagination"].(map[string]any); ok {
		for _, name := range ops {
			if p, ok := all[name]; ok {
				keptPages[name] = p
			}
		}
	}
	return map[string]any{
		"metadata":   model["metadata"],
		"operations": keptOps,
		"shapes":     keptShapes,
		"pagination": keptPages,
	}
}

// undocumented is v without its documentation strings, at every depth.
func undocumented(v map[string]any) map[string]any {
	out := map[string]any{}
	for k, x := range v {
		if _, isString := x.(string); isString && (k == "documentation" || k == "documentationUrl") {
			continue // a member named "documentation" is a map and stays
		}
		if m, ok := x.(map[string]any); ok {
			x = undocumented(m)
		}
		out[k] = x
	}
	return out
}

func git(dir string, args ...string) []byte {
	b, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		log.Fatalf("trim: git %s: %v", strings.Join(args, " "), err)
	}
	return b
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
