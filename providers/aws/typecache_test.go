package aws

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

// slowTypes answers DescribeInstanceTypes after a pause, so that the scopes
// of a region overlap, and counts how often each type was asked for.
type slowTypes struct {
	pause time.Duration
	gate  chan struct{} // when set, each call waits for it
	known map[string]types.InstanceTypeInfo

	mu    sync.Mutex
	asked map[string]int
	fail  int // calls left to fail
}

func (s *slowTypes) DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	if s.gate != nil {
		<-s.gate
	}
	time.Sleep(s.pause)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return nil, &smithy.GenericAPIError{Code: "InternalError", Message: "boom"}
	}
	out := &ec2.DescribeInstanceTypesOutput{}
	for _, t := range in.InstanceTypes {
		s.asked[string(t)]++
		if info, ok := s.known[string(t)]; ok {
			out.InstanceTypes = append(out.InstanceTypes, info)
		}
	}
	return out, nil
}

func newSlowTypes(n int) (*slowTypes, []string) {
	s := &slowTypes{pause: 3 * time.Millisecond, known: map[string]types.InstanceTypeInfo{}, asked: map[string]int{}}
	var names []string
	for i := range n {
		name := "g5." + strconv.Itoa(i) + "xlarge"
		names = append(names, name)
		if i%5 != 0 { // every fifth type AWS does not describe as an accelerator type
			s.known[name] = gpuType(name, "A10G", int32(1+i%8), 22888, 4, 16384)
		}
	}
	return s, names
}

// TestInstanceTypesAskedOncePerRegion: the scopes of a region (an account
// each) start together and ask for overlapping types; each type of a region
// is asked for once, and every scope gets every type it named, right.
func TestInstanceTypesAskedOncePerRegion(t *testing.T) {
	for seed := range uint64(20) {
		fake, all := newSlowTypes(150)
		p := unitProvider()
		r := rand.New(rand.NewPCG(seed, 9))
		var wg sync.WaitGroup
		errs := make(chan error, 24)
		for scope := range 24 {
			region := []string{"us-east-1", "eu-west-1"}[scope%2]
			names := append([]string(nil), all[r.IntN(40):]...)
			r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			names = names[:1+r.IntN(len(names))]
			wg.Go(func() {
				got, err := p.instanceTypes(context.Background(), fake, region, names)
				if err != nil {
					errs <- err
					return
				}
				for _, n := range names {
					want, known := fake.known[n]
					if info, ok := got[n]; !ok || info.accelerator != known || known && info != typeInfoOf(want) {
						errs <- errors.New(region + " " + n + ": wrong or missing facts")
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for n, k := range fake.asked {
			if k > 2 {
				t.Fatalf("seed %d: %s asked for %d times by two regions", seed, n, k)
			}
		}
		perRegion := map[string]int{}
		p.typeMu.Lock()
		for key := range p.typeMap {
			perRegion[key]++
		}
		p.typeMu.Unlock()
		asked := 0
		for _, k := range fake.asked {
			asked += k
		}
		if asked != len(perRegion) {
			t.Fatalf("seed %d: %d type names asked for, %d region-type pairs cached: some asked twice", seed, asked, len(perRegion))
		}
	}
}

// TestInstanceTypesFailedCallRetried: when the call a scope waited for
// fails, that scope asks for the types itself; the failing scope gets the
// error and nothing is cached from it.
func TestInstanceTypesFailedCallRetried(t *testing.T) {
	fake, names := newSlowTypes(10)
	fake.fail = 1
	fake.gate = make(chan struct{})
	p := unitProvider()
	first := make(chan error, 1)
	go func() {
		_, err := p.instanceTypes(context.Background(), fake, "us-east-1", names)
		first <- err
	}()
	// Wait until the first scope owns the types, then start a second one,
	// which waits for them.
	waitOwned(p, len(names))
	second := make(chan error, 1)
	var got map[string]instanceTypeInfo
	go func() {
		var err error
		got, err = p.instanceTypes(context.Background(), fake, "us-east-1", names)
		second <- err
	}()
	close(fake.gate)
	if err := <-first; err == nil {
		t.Fatal("the failed call's scope got no error")
	}
	if err := <-second; err != nil {
		t.Fatalf("the waiting scope: %v", err)
	}
	if len(got) != len(names) {
		t.Fatalf("the waiting scope got %d of %d types", len(got), len(names))
	}
	for _, n := range names {
		if fake.asked[n] != 1 {
			t.Errorf("%s answered %d times, want once (after the failed call)", n, fake.asked[n])
		}
	}
}

// TestInstanceTypesWaitHonoursContext: a scope waiting for another's call
// stops when its context ends.
func TestInstanceTypesWaitHonoursContext(t *testing.T) {
	fake, names := newSlowTypes(3)
	fake.gate = make(chan struct{})
	defer close(fake.gate)
	p := unitProvider()
	go p.instanceTypes(context.Background(), fake, "us-east-1", names)
	waitOwned(p, len(names))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.instanceTypes(ctx, fake, "us-east-1", names); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
}

// waitOwned waits until n region-type pairs are cached or being asked for.
func waitOwned(p *Provider, n int) {
	for {
		p.typeMu.Lock()
		k := len(p.typeMap)
		p.typeMu.Unlock()
		if k == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
