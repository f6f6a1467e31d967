package fleet

import (
	"testing"
)

// TestWorkloadThroughputAndRun covers the throughput and training-run fields
// of a workload: accepted values and the messages for wrong ones.
func TestWorkloadThroughputAndRun(t *testing.T) {
	for _, tc := range []struct{ name, workload, want string }{
		{"throughput", "{type: inference, tokensPerSecond: 300, requestsPerSecond: 2.5}", ""},
		{"zero throughput", "{type: inference, tokensPerSecond: 0, requestsPerSecond: 0}", ""},
		{"training run", "{type: training, trainingRun: pretrain-7, trainingRunHours: 480}", ""},
		{"run without hours", "{type: training, trainingRun: pretrain-7}", ""},
		{"negative tokens", "{type: inference, tokensPerSecond: -1}", `workload.tokensPerSecond: -1 is negative`},
		{"negative requests", "{type: inference, requestsPerSecond: -0.5}", `workload.requestsPerSecond: -0.5 is negative`},
		{"tokens as string", "{type: inference, tokensPerSecond: fast}", `workload.tokensPerSecond: want a number, got the string "fast"`},
		{"negative run hours", "{type: training, trainingRun: r, trainingRunHours: -3}", `workload.trainingRunHours: -3 is negative`},
		{"hours without run", "{type: training, trainingRunHours: 10}", `workload.trainingRunHours: given without trainingRun; name the run it belongs to`},
		{"blank run", "{type: training, trainingRun: \" \"}", `workload.trainingRun: blank; name the run or leave the field out`},
		{"run as number", "{type: training, trainingRun: 7}", `workload.trainingRun: want a string, got the number 7; quote it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("f.yaml", []byte(base+"    workload: "+tc.workload+"\n"))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if w := f.Instances[0].Workload; w == nil {
					t.Fatal("no workload")
				}
				return
			}
			want := `f.yaml: instances[0] (id "x-1"): ` + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("got  %v\nwant %s", err, want)
			}
		})
	}
	f, err := Parse("f.yaml", []byte(base+"    workload: {type: training, trainingRun: pretrain-7, trainingRunHours: 480, tokensPerSecond: 12.5, requestsPerSecond: 0.25}\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := f.Instances[0].Workload
	if w.TrainingRun != "pretrain-7" || w.TrainingRunHours != 480 || w.TokensPerSecond != 12.5 || w.RequestsPerSecond != 0.25 {
		t.Errorf("decoded %+v", *w)
	}
}
