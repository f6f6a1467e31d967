package sim_test

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

func getJSON(t *testing.T, c *http.Client, u string, v any) int {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp.StatusCode
}

// TestEntraClientCredentials: discovery leads to the token endpoint, whose
// client-credentials grant answers a JWT signed with the published key for
// the scope's resource; wrong tenants, grants, secrets and scopes answer
// Entra ID's OAuth errors.
func TestEntraClientCredentials(t *testing.T) {
	s := sim.New(fleetOf(1), sim.Options{Now: func() time.Time { return now }, Clients: map[string]string{"app-1": "s3cret"}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := srv.Client()

	var disc map[string]any
	if st := getJSON(t, c, srv.URL+"/common/discovery/instance?api-version=1.1&authorization_endpoint="+url.QueryEscape("https://127.0.0.1:4566/"+sim.Tenant+"/oauth2/v2.0/authorize"), &disc); st != 200 ||
		disc["tenant_discovery_endpoint"] != "https://127.0.0.1:4566/"+sim.Tenant+"/v2.0/.well-known/openid-configuration" {
		t.Fatalf("instance discovery: %d %v", st, disc)
	}
	if st := getJSON(t, c, srv.URL+"/common/discovery/instance?api-version=1.1&authorization_endpoint="+url.QueryEscape("https://login.example.com/x/oauth2/v2.0/authorize"), &disc); st != 400 || disc["error"] != "invalid_instance" {
		t.Errorf("an unknown instance: %d %v", st, disc)
	}
	var oidc map[string]any
	if st := getJSON(t, c, srv.URL+"/"+sim.Tenant+"/v2.0/.well-known/openid-configuration", &oidc); st != 200 ||
		oidc["token_endpoint"] != srv.URL+"/"+sim.Tenant+"/oauth2/v2.0/token" || oidc["issuer"] != srv.URL+"/"+sim.Tenant+"/v2.0" {
		t.Fatalf("openid configuration: %d %v", st, oidc)
	}
	if st := getJSON(t, c, srv.URL+"/not-a-tenant/v2.0/.well-known/openid-configuration", &oidc); st != 400 || oidc["error"] != "invalid_tenant" {
		t.Errorf("an unknown tenant: %d %v", st, oidc)
	}

	token := func(tenant string, form url.Values) (int, map[string]any) {
		resp, err := c.PostForm(srv.URL+"/"+tenant+"/oauth2/v2.0/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	good := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app-1"}, "client_secret": {"s3cret"}, "scope": {sim.ARMAudience + "/.default"}}
	for _, bad := range []struct {
		tenant, key, val, code string
		status                 int
	}{
		{"common", "", "", "invalid_request", 400},
		{sim.Tenant, "grant_type", "password", "unsupported_grant_type", 400},
		{sim.Tenant, "client_secret", "wrong", "invalid_client", 401},
		{sim.Tenant, "client_id", "app-2", "unauthorized_client", 400},
		{sim.Tenant, "scope", sim.ARMAudience, "invalid_scope", 400},
	} {
		form := url.Values{}
		for k, v := range good {
			form[k] = v
		}
		if bad.key != "" {
			form.Set(bad.key, bad.val)
		}
		if st, out := token(bad.tenant, form); st != bad.status || out["error"] != bad.code || !strings.HasPrefix(out["error_description"].(string), "AADSTS") {
			t.Errorf("%s %s=%q: %d %v, want %d %s", bad.tenant, bad.key, bad.val, st, out, bad.status, bad.code)
		}
	}
	st, out := token(sim.Tenant, good)
	if st != 200 || out["token_type"] != "Bearer" {
		t.Fatalf("token: %d %v", st, out)
	}
	parts := strings.Split(out["access_token"].(string), ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q is not a JWS", out["access_token"])
	}
	var head, claims map[string]any
	for i, v := range []*map[string]any{&head, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	if head["alg"] != "RS256" || claims["aud"] != sim.ARMAudience || claims["tid"] != sim.Tenant || claims["appid"] != "app-1" {
		t.Errorf("token header %v, claims %v", head, claims)
	}
	// The signature verifies with the key jwks_uri publishes.
	var keys struct {
		Keys []struct{ Kid, N, E string }
	}
	getJSON(t, c, oidc["jwks_uri"].(string), &keys)
	if len(keys.Keys) != 1 || keys.Keys[0].Kid != head["kid"] {
		t.Fatalf("keys %+v, token kid %v", keys, head["kid"])
	}
	n, _ := base64.RawURLEncoding.DecodeString(keys.Keys[0].N)
	e, _ := base64.RawURLEncoding.DecodeString(keys.Keys[0].E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig); err != nil {
		t.Errorf("the token's signature does not verify: %v", err)
	}
}

// TestCloudMetadata: the 2015-01-01 object and the later list of clouds
// name the simulator as resource manager and Entra ID's host as login.
func TestCloudMetadata(t *testing.T) {
	srv := httptest.NewServer(sim.New(fleetOf(1), sim.Options{Now: func() time.Time { return now }}))
	defer srv.Close()
	var old struct {
		Authentication struct {
			LoginEndpoint string
			Audiences     []string
		}
	}
	if st := getJSON(t, srv.Client(), srv.URL+"/metadata/endpoints?api-version=2015-01-01", &old); st != 200 ||
		old.Authentication.LoginEndpoint != "https://login.microsoftonline.com/" || len(old.Authentication.Audiences) == 0 || old.Authentication.Audiences[0] != sim.ARMAudience {
		t.Errorf("2015-01-01: %d %+v", st, old)
	}
	var clouds []struct{ Name, ResourceManager string }
	if st := getJSON(t, srv.Client(), srv.URL+"/metadata/endpoints?api-version=2022-09-01", &clouds); st != 200 || len(clouds) != 1 || clouds[0].ResourceManager != srv.URL+"/" {
		t.Errorf("2022-09-01: %d %+v", st, clouds)
	}
	var e map[string]any
	if st := getJSON(t, srv.Client(), srv.URL+"/metadata/endpoints?api-version=2016-01-01", &e); st != 400 {
		t.Errorf("an unknown api-version: %d %v", st, e)
	}
}

// TestMetricsTimespanAsAzureCLISendsIt: Azure Monitor reads the timespan
// `az monitor metrics list` sends, percent-encoded twice and without a UTC
// offset (azure-cli's list_metrics quote_plus-es an isoformat() of a naive
// UTC time, and the SDK encodes the query again), as the same span.
func TestMetricsTimespanAsAzureCLISendsIt(t *testing.T) {
	srv, _ := start(t, fleetOf(1), sim.Options{})
	id := "/subscriptions/" + sub + "/resourceGroups/rg-gpu-eastus/providers/Microsoft.Compute/virtualMachines/vm-000"
	span := now.Add(-2*time.Hour).Format("2006-01-02T15:04:05.000000") + "/" + now.Format("2006-01-02T15:04:05.000000")
	q := "api-version=2018-01-01&metricnamespace=" + url.QueryEscape(sim.PlatformNamespace) + "&metricnames=" + url.QueryEscape(sim.MetricCPU) +
		"&interval=PT1H&timespan=" + url.QueryEscape(url.QueryEscape(span))
	got := metricsCall(t, http.MethodGet, srv.URL+id+"/providers/Microsoft.Insights/metrics?"+q, nil)
	if want := now.Add(-2*time.Hour).Format(time.RFC3339) + "/" + now.Format(time.RFC3339); got["timespan"] != want {
		t.Errorf("timespan %v, want %s", got["timespan"], want)
	}
}
