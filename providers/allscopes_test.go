package providers

import (
	"context"
	"errors"
	"testing"
)

type partial struct {
	scopes []Scope
	failed []*ScopeError
	err    error
}

func (p partial) PartialScopes(context.Context) ([]Scope, []*ScopeError, error) {
	return p.scopes, p.failed, p.err
}

// AllScopes keeps every scope when nothing failed, and otherwise fails with
// the first failed account, described by the adapter and wrapping its error.
func TestAllScopes(t *testing.T) {
	desc := func(f *ScopeError) string { return "acme account " + f.Scope.Account }
	ok := partial{scopes: []Scope{{Account: "a", Region: "r1"}, {Account: "a", Region: "r2"}}}
	if got, err := AllScopes(context.Background(), ok, desc); err != nil || len(got) != 2 {
		t.Errorf("AllScopes = %v, %v", got, err)
	}
	failed := ok
	failed.failed = []*ScopeError{{Scope: Scope{Account: "b"}, Err: ErrPermission}, {Scope: Scope{Account: "c"}, Err: ErrThrottled}}
	if _, err := AllScopes(context.Background(), failed, desc); !errors.Is(err, ErrPermission) || err.Error() != "acme account b: "+ErrPermission.Error() {
		t.Errorf("error %v, want the first failed account's", err)
	}
	boom := errors.New("no credentials")
	if _, err := AllScopes(context.Background(), partial{err: boom}, desc); !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
}
