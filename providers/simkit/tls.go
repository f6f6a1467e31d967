package simkit

// HTTPS for the simulators, for the clouds' clients that accept nothing
// else (Azure CLI's MSAL refuses an http authority): a certificate
// authority generated at start, a leaf it signs for the loopback names and
// the public hosts a simulator stands in for, one port that answers TLS and
// cleartext alike, and an HTTPS proxy (CONNECT) that takes a client's
// requests for those public hosts to the simulators instead.

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// TLS is a certificate authority made at start and the server certificate
// it signed.
type TLS struct {
	// CAPEM is the authority's certificate, PEM-encoded: the bundle a
	// client trusts (REQUESTS_CA_BUNDLE, SSL_CERT_FILE, AWS_CA_BUNDLE).
	CAPEM []byte
	// Config serves the leaf (HTTP/1.1 only).
	Config *tls.Config
	// Hosts are the DNS names and IP addresses the leaf is valid for.
	Hosts []string
	// Pool trusts the authority, for Go clients.
	Pool *x509.CertPool
}

// NewTLS generates an authority and a leaf valid for 127.0.0.1, ::1,
// localhost and hosts, for 24 hours from now.
func NewTLS(hosts ...string) (*TLS, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "gpufinops cloudsim CA", Organization: []string{"gpufinops cloudsim"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	all := append([]string{"127.0.0.1", "::1", "localhost"}, hosts...)
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "gpufinops cloudsim", Organization: []string{"gpufinops cloudsim"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range all {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &TLS{
		CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Config: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"http/1.1"},
			Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey}},
		},
		Hosts: all,
		Pool:  pool,
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// WriteCA writes the authority's certificate to path (0644), for clients
// to trust.
func (t *TLS) WriteCA(path string) error {
	return os.WriteFile(path, t.CAPEM, 0o644)
}

// Client is an HTTP client that trusts the authority.
func (t *TLS) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: t.Pool, MinVersion: tls.VersionTLS12}}}
}

// DualListener answers TLS and cleartext on one port: a connection whose
// first byte opens a TLS handshake (0x16) is served through cfg, any other
// as it is (HTTP/1.1, or cleartext HTTP/2 for gRPC). It hands http.Server a
// *tls.Conn for the former, which it serves as HTTPS. The first byte is
// awaited beside Accept (10 s at most), so a silent client holds up no
// other.
func DualListener(ln net.Listener, cfg *tls.Config) net.Listener {
	l := &dualListener{Listener: ln, cfg: cfg, conns: make(chan net.Conn), errs: make(chan error, 1), closed: make(chan struct{})}
	go l.loop()
	return l
}

type dualListener struct {
	net.Listener
	cfg    *tls.Config
	conns  chan net.Conn
	errs   chan error
	closed chan struct{}
	once   sync.Once
}

func (l *dualListener) loop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			l.errs <- err
			return
		}
		go l.sniff(c)
	}
}

func (l *dualListener) sniff(c net.Conn) {
	r := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := r.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: r}
	if b[0] == 0x16 {
		out = tls.Server(out, l.cfg)
	}
	select {
	case l.conns <- out:
	case <-l.closed:
		c.Close()
	}
}

// Accept returns the next connection, TLS or cleartext.
func (l *dualListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.errs:
		l.errs <- err
		return nil, err
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting.
func (l *dualListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// peekedConn reads what its reader buffered first.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// ConnectProxy serves h and, as an HTTPS proxy, the CONNECT requests for
// the public hosts (port 443) it stands in for: the tunnel is answered over
// TLS with cfg (whose leaf must name those hosts) by h itself, so a client
// whose HTTPS_PROXY is the simulator reaches it for those hosts. A CONNECT
// to any other host is refused with 403: nothing leaves the machine.
func ConnectProxy(h http.Handler, cfg *tls.Config, hosts ...string) http.Handler {
	allowed := map[string]bool{}
	for _, host := range hosts {
		allowed[strings.ToLower(host)+":443"] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			h.ServeHTTP(w, r)
			return
		}
		if !allowed[strings.ToLower(r.Host)] {
			http.Error(w, fmt.Sprintf("gpufinops cloudsim: no tunnel to %s: the simulator stands in only for %s", r.Host, strings.Join(hosts, ", ")), http.StatusForbidden)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "gpufinops cloudsim: this connection cannot be tunnelled", http.StatusInternalServerError)
			return
		}
		conn, rw, err := hj.Hijack()
		if err != nil {
			return
		}
		if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err == nil {
			err = rw.Flush()
		}
		if err != nil {
			conn.Close()
			return
		}
		inner := tls.Server(&peekedConn{Conn: conn, r: rw.Reader}, cfg)
		done := make(chan struct{})
		var once sync.Once
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
			ConnState: func(_ net.Conn, st http.ConnState) {
				if st == http.StateClosed || st == http.StateHijacked {
					once.Do(func() { close(done) })
				}
			}}
		_ = srv.Serve(&oneConn{c: inner, done: done})
	})
}

// oneConn is a listener that accepts one connection, then blocks until
// done (that connection closed).
type oneConn struct {
	mu   sync.Mutex
	c    net.Conn
	done chan struct{}
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.c
	l.c = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, errors.New("tunnel closed")
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return tunnelAddr{} }

type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "tunnel" }
func (tunnelAddr) String() string  { return "tunnel" }
