//go:build ignore

// descriptors_gen writes monitoring.binpb: the protobuf descriptors of
// google.monitoring.v3.MetricService and google.rpc's Status and error
// details, with every file they depend on, as a FileDescriptorSet. They are
// read from the generated packages in the module graph
// (cloud.google.com/go/monitoring/apiv3/v2/monitoringpb and
// google.golang.org/genproto/googleapis/rpc), so that the simulator checks
// against Google's descriptors without importing the SDK:
//
//	go run ./providers/gcp/sim/models/descriptors_gen.go
package main

import (
	"fmt"
	"log"
	"os"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(monitoringpb.File_google_monitoring_v3_metric_service_proto)
	add((&errdetails.ErrorInfo{}).ProtoReflect().Descriptor().ParentFile())
	add((&spb.Status{}).ProtoReflect().Descriptor().ParentFile())
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("providers/gcp/sim/models/monitoring.binpb", b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(set.File), "files,", len(b), "bytes")
}
