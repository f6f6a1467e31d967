package simkit

import (
	"bufio"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDualListenerAndProxy: one port answers https and http, the https
// request knows it came over TLS, and the port as HTTPS proxy tunnels to
// the hosts it stands in for, and to no other.
func TestDualListenerAndProxy(t *testing.T) {
	tc, err := NewTLS("login.example.com")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		_, _ = io.WriteString(w, scheme+" "+r.Host+r.URL.Path)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ConnectProxy(h, tc.Config, "login.example.com"), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(DualListener(ln, tc.Config)) }()
	defer srv.Close()
	addr := ln.Addr().String()

	// A silent connection holds up no other.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	get := func(c *http.Client, u string) string {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b)
	}
	if got := get(tc.Client(), "https://"+addr+"/a"); got != "200 OK https "+addr+"/a" {
		t.Errorf("https: %q", got)
	}
	if got := get(http.DefaultClient, "http://"+addr+"/b"); got != "200 OK http "+addr+"/b" {
		t.Errorf("http: %q", got)
	}
	proxy, _ := url.Parse("http://" + addr)
	pc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: tc.Pool}}}
	if got := get(pc, "https://login.example.com/tenant/x"); got != "200 OK https login.example.com/tenant/x" {
		t.Errorf("through the proxy: %q", got)
	}
	// Another host is refused.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "login.example.com") {
		t.Errorf("CONNECT example.org: %s %s", resp.Status, b)
	}
	// The certificate is the authority's, for the loopback names too.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: tc.Pool, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("localhost: %v", err)
	}
	conn.Close()
	if _, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "localhost"}); err == nil {
		t.Error("the leaf verified without the authority")
	}
}
