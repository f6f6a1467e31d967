package root

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestNotifyContextCancelsOnSIGINTAndSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, stop := NotifyContext(context.Background())
			defer stop()
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("not cancelled")
			}
			if c := context.Cause(ctx); c == nil || c.Error() != "interrupted by "+sig.String() || !errors.Is(ctx.Err(), context.Canceled) {
				t.Fatalf("cause %v", c)
			}
		})
	}
	// stop without a signal cancels and releases.
	ctx, stop := NotifyContext(context.Background())
	stop()
	if ctx.Err() == nil {
		t.Fatal("stop did not cancel")
	}
}
