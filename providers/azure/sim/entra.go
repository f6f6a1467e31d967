package sim

// A minimal Microsoft Entra ID and the ARM cloud metadata, so that a client
// that logs in for itself (Azure CLI through MSAL) can: instance discovery
// (GET /common/discovery/instance), OpenID discovery (GET
// /{tenant}/v2.0/.well-known/openid-configuration), the signing keys (GET
// /{tenant}/discovery/v2.0/keys), the client-credentials grant of the v2.0
// token endpoint (POST /{tenant}/oauth2/v2.0/token) answering an RS256 JWT
// access token, and GET /metadata/endpoints (the 2015-01-01 object and the
// 2019-05-01-and-later list of clouds). None of them needs a token; they are
// not counted and take no faults. MSAL refuses an authority that is not
// https: serve the simulator over TLS (simkit.NewTLS) for such clients.

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Tenant is the Entra ID tenant that owns the simulator's subscriptions.
const Tenant = "00000000-0000-0000-0000-0000000000aa"

// EntraHost is Entra ID's public host. MSAL asks it, whatever the
// authority, to discover an authority it does not know: a client reaches
// the simulator's answer through the simulator as its HTTPS proxy
// (simkit.ConnectProxy).
const EntraHost = "login.microsoftonline.com"

// ARMAudience is the application ID URI of Azure Resource Manager, the
// audience the cloud metadata names and tokens for ARM carry.
const ARMAudience = "https://management.core.windows.net/"

var (
	reOpenID   = regexp.MustCompile(`^/([^/]+)/v2\.0/\.well-known/openid-configuration$`)
	reToken    = regexp.MustCompile(`^/([^/]+)/oauth2/v2\.0/token$`)
	reKeys     = regexp.MustCompile(`^/([^/]+)/discovery/v2\.0/keys$`)
	reAuthzEnd = regexp.MustCompile(`^/([^/]+)/oauth2/(v2\.0/)?authorize$`)
)

// isIdentity reports whether a request is for Entra ID or the cloud
// metadata.
func isIdentity(r *http.Request) bool {
	p := r.URL.Path
	return strings.EqualFold(r.URL.Hostname(), EntraHost) || stripHost(r.Host) == EntraHost ||
		strings.TrimLeft(p, "/") == "metadata/endpoints" || p == "/common/discovery/instance" ||
		reOpenID.MatchString(p) || reToken.MatchString(p) || reKeys.MatchString(p)
}

func stripHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(hostport)
}

// serveIdentity answers an Entra ID or cloud metadata request.
func (s *Server) serveIdentity(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.TrimLeft(p, "/") == "metadata/endpoints" && r.Method == http.MethodGet:
		s.serveCloudMetadata(w, r)
	case p == "/common/discovery/instance" && r.Method == http.MethodGet:
		serveInstanceDiscovery(w, r)
	case reOpenID.MatchString(p) && r.Method == http.MethodGet:
		tenant := reOpenID.FindStringSubmatch(p)[1]
		if !knownTenant(tenant) {
			entraError(w, http.StatusBadRequest, "invalid_tenant", 90002, "Tenant '"+tenant+"' not found.")
			return
		}
		writeOAuth(w, http.StatusOK, openIDConfig(baseURL(r), tenant))
	case reKeys.MatchString(p) && r.Method == http.MethodGet:
		k := s.signingKey()
		writeOAuth(w, http.StatusOK, map[string]any{"keys": []map[string]any{{"kty": "RSA", "use": "sig", "kid": k.kid, "alg": "RS256",
			"n": b64(k.key.N.Bytes()), "e": b64(big.NewInt(int64(k.key.E)).Bytes())}}})
	case reToken.MatchString(p) && r.Method == http.MethodPost:
		s.serveToken(w, r, reToken.FindStringSubmatch(p)[1])
	default:
		entraError(w, http.StatusNotFound, "invalid_request", 900561, "The endpoint only accepts "+map[bool]string{true: "POST", false: "GET"}[reToken.MatchString(p)]+" requests: "+r.Method+" "+p)
	}
}

// knownTenant is the simulator's tenant, or an alias an authority may
// name instead of a tenant ID.
func knownTenant(t string) bool {
	switch strings.ToLower(t) {
	case Tenant, "common", "organizations":
		return true
	}
	return false
}

// serveCloudMetadata answers ARM's metadata endpoint with the simulator as
// the cloud's resource manager. api-version
// 2015-01-01 answers the one-cloud object, 2019-05-01 and later the list.
func (s *Server) serveCloudMetadata(w http.ResponseWriter, r *http.Request) {
	base := baseURL(r) + "/"
	v := r.URL.Query().Get("api-version")
	// The login endpoint is Entra ID's public host, as Azure's own: MSAL
	// (1.21) drops an authority's port when it asks instance discovery
	// about it, so the simulator's Entra ID is reached there, through the
	// simulator as HTTPS proxy.
	auth := map[string]any{"loginEndpoint": "https://" + EntraHost + "/", "audiences": []string{ARMAudience}}
	switch {
	case v == "":
		writeError(w, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
	case v == "2015-01-01":
		writeJSON(w, map[string]any{"galleryEndpoint": base, "graphEndpoint": base, "portalEndpoint": base, "authentication": auth})
	case v >= "2019-05-01" && len(v) == len("2019-05-01"):
		auth["tenant"] = "common"
		auth["identityProvider"] = "AAD"
		writeJSON(w, []map[string]any{{"name": "gpufinopsSim", "resourceManager": base, "portal": base, "gallery": base,
			"graph": base, "graphAudience": base, "microsoftGraphResourceId": base, "authentication": auth, "suffixes": map[string]any{}}})
	default:
		writeError(w, http.StatusBadRequest, "InvalidApiVersionParameter", "The api-version '"+v+"' is invalid. The supported versions are '2015-01-01', '2019-05-01', '2022-09-01'.")
	}
}

// serveInstanceDiscovery validates an authority: Entra ID's public host
// and the simulator's loopback addresses are instances it knows, and their
// tenant discovery endpoint is the v2.0 OpenID configuration there.
func serveInstanceDiscovery(w http.ResponseWriter, r *http.Request) {
	ae := r.URL.Query().Get("authorization_endpoint")
	if r.URL.Query().Get("api-version") == "" {
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'api-version'.")
		return
	}
	u, err := url.Parse(ae)
	if err != nil || u.Scheme != "https" || !reAuthzEnd.MatchString(u.Path) {
		entraError(w, http.StatusBadRequest, "invalid_request", 50049, "Unknown or invalid instance.")
		return
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); host != EntraHost && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		entraError(w, http.StatusBadRequest, "invalid_instance", 50049, "Unknown or invalid instance.")
		return
	}
	tenant := reAuthzEnd.FindStringSubmatch(u.Path)[1]
	writeOAuth(w, http.StatusOK, map[string]any{
		"tenant_discovery_endpoint": "https://" + u.Host + "/" + tenant + "/v2.0/.well-known/openid-configuration",
		"api-version":               "1.1",
		"metadata":                  []map[string]any{{"preferred_network": u.Host, "preferred_cache": u.Host, "aliases": []string{u.Host}}},
	})
}

// openIDConfig is a tenant's v2.0 OpenID configuration at base.
func openIDConfig(base, tenant string) map[string]any {
	t := tenant
	if !strings.EqualFold(t, Tenant) {
		t = "{tenantid}" // common and organizations name no issuer
	}
	at := base + "/" + tenant
	return map[string]any{
		"issuer":                                base + "/" + t + "/v2.0",
		"authorization_endpoint":                at + "/oauth2/v2.0/authorize",
		"token_endpoint":                        at + "/oauth2/v2.0/token",
		"device_authorization_endpoint":         at + "/oauth2/v2.0/devicecode",
		"end_session_endpoint":                  at + "/oauth2/v2.0/logout",
		"jwks_uri":                              at + "/discovery/v2.0/keys",
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
		"response_types_supported":              []string{"code", "id_token", "code id_token", "id_token token"},
		"response_modes_supported":              []string{"query", "fragment", "form_post"},
		"scopes_supported":                      []string{"openid", "profile", "email", "offline_access"},
		"subject_types_supported":               []string{"pairwise"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"request_uri_parameter_supported":       false,
		"tenant_region_scope":                   "NA",
		"cloud_instance_name":                   "microsoftonline.com",
	}
}

// serveToken is the client-credentials grant: a client secret (form or
// HTTP Basic) for a scope "<resource>/.default" answers a bearer access
// token for that resource, valid an hour.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request, tenant string) {
	if !strings.EqualFold(tenant, Tenant) {
		// A client-credentials grant names its tenant.
		entraError(w, http.StatusBadRequest, "invalid_request", 90002, "Tenant '"+tenant+"' not found. Use a tenant-specific endpoint for the client credentials flow.")
		return
	}
	if err := r.ParseForm(); err != nil {
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must be application/x-www-form-urlencoded: "+err.Error())
		return
	}
	f := r.PostForm
	if gt := f.Get("grant_type"); gt != "client_credentials" {
		if gt == "" {
			entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'grant_type'.")
		} else {
			entraError(w, http.StatusBadRequest, "unsupported_grant_type", 70003, "The app requested an unsupported grant type '"+gt+"'.")
		}
		return
	}
	id, secret := f.Get("client_id"), f.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	if id == "" {
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'client_id'.")
		return
	}
	if secret == "" {
		entraError(w, http.StatusUnauthorized, "invalid_client", 7000218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.")
		return
	}
	if want, ok := s.opts.Clients[id]; s.opts.Clients != nil && (!ok || want != secret) {
		if !ok {
			entraError(w, http.StatusBadRequest, "unauthorized_client", 700016, "Application with identifier '"+id+"' was not found in the directory '"+tenant+"'.")
		} else {
			entraError(w, http.StatusUnauthorized, "invalid_client", 7000215, "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '"+id+"'.")
		}
		return
	}
	scope := strings.TrimSpace(f.Get("scope"))
	if scope == "" {
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'scope'.")
		return
	}
	var resource string
	for _, sc := range strings.Fields(scope) {
		if !strings.HasSuffix(sc, "/.default") {
			entraError(w, http.StatusBadRequest, "invalid_scope", 1002012, "The provided value for scope "+sc+" is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).")
			return
		}
		if resource != "" {
			entraError(w, http.StatusBadRequest, "invalid_scope", 70011, "The provided value for the input parameter 'scope' is not valid: one resource per token.")
			return
		}
		resource = strings.TrimSuffix(sc, "/.default")
	}
	now := s.opts.Now()
	if d := time.Since(now); d > time.Hour || d < -time.Hour {
		now = time.Now() // the token's lifetime is the client's clock's, not the series clock's
	}
	tok, err := s.signingKey().sign(map[string]any{
		"aud": resource, "iss": "https://sts.windows.net/" + Tenant + "/", "ver": "1.0", "tid": Tenant,
		"appid": id, "appidacr": "1", "idtyp": "app", "oid": principalID(id), "sub": principalID(id),
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	if err != nil {
		entraError(w, http.StatusInternalServerError, "server_error", 0, err.Error())
		return
	}
	writeOAuth(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
}

// principalID is a client's service principal object ID, stable per client.
func principalID(client string) string {
	d := sha256.Sum256([]byte("principal:" + client))
	return fmt.Sprintf("%x-%x-%x-%x-%x", d[0:4], d[4:6], d[6:8], d[8:10], d[10:16])
}

// entraError writes the OAuth 2.0 error body Entra ID answers with.
func entraError(w http.ResponseWriter, status int, code string, aadsts int, msg string) {
	desc := fmt.Sprintf("AADSTS%d: %s", aadsts, msg)
	writeOAuth(w, status, map[string]any{"error": code, "error_description": desc, "error_codes": []int{aadsts},
		"timestamp": time.Now().UTC().Format("2006-01-02 15:04:05Z"), "trace_id": "00000000-0000-0000-0000-000000000000",
		"correlation_id": "00000000-0000-0000-0000-000000000000"})
}

func writeOAuth(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store, no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// tokenKey is the RSA key the tokens are signed with, made on first use.
type tokenKey struct {
	key *rsa.PrivateKey
	kid string
}

var (
	keyOnce sync.Once
	keyVal  *tokenKey
	keyErr  error
)

// signingKey is the process's token key: RSA generation takes a while, and
// every simulator in a process may share one.
func (s *Server) signingKey() *tokenKey {
	keyOnce.Do(func() {
		var k *rsa.PrivateKey
		k, keyErr = rsa.GenerateKey(rand.Reader, 2048)
		if keyErr == nil {
			d := sha256.Sum256(k.N.Bytes())
			keyVal = &tokenKey{key: k, kid: b64(d[:15])}
		}
	})
	if keyErr != nil {
		panic("azure sim: generating the token key: " + keyErr.Error()) // crypto/rand does not fail
	}
	return keyVal
}

// sign makes a compact JWS (RS256) of claims.
func (k *tokenKey) sign(claims map[string]any) (string, error) {
	head, err := json.Marshal(map[string]string{"typ": "JWT", "alg": "RS256", "kid": k.kid})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	in := b64(head) + "." + b64(body)
	d := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k.key, crypto.SHA256, d[:])
	if err != nil {
		return "", err
	}
	return in + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
