package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 with the
// given serial number and its key, returning the certificate.
func writeSelfSigned(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "zkelect test daemon"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// The key first: the daemon re-reads when either file changes, and a
	// half-written pair is skipped (the last good one is served).
	for path, blk := range map[string]*pem.Block{keyFile: {Type: "PRIVATE KEY", Bytes: kder}, certFile: {Type: "CERTIFICATE", Bytes: der}} {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, pem.EncodeToMemory(blk), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestShardsServesHTTPSAndReloadsItsCertificate: with --listen-tls-cert and
// --listen-tls-key the daemon's endpoint speaks HTTPS only, and serves a
// rotated certificate without a restart.
func TestShardsServesHTTPSAndReloadsItsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeSelfSigned(t, certFile, keyFile, 1)
	d := startDaemonWith(t, testPath(t), "https-a", 2, []string{"--listen-tls-cert", certFile, "--listen-tls-key", keyFile})
	addr := strings.TrimPrefix(d.url, "http://")

	served := func(trust *x509.Certificate) (*x509.Certificate, error) {
		pool := x509.NewCertPool()
		pool.AddCert(trust)
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + addr + "/healthz")
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET https://%s/healthz: %s", addr, resp.Status)
		}
		return resp.TLS.PeerCertificates[0], nil
	}
	if got, err := served(first); err != nil || got.SerialNumber.Int64() != 1 {
		t.Fatalf("HTTPS with the first certificate: %v, %v; want it served", got, err)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("plain HTTP on a --listen-tls-cert endpoint answered %s; want refused", resp.Status)
		}
	}

	second := writeSelfSigned(t, certFile, keyFile, 2)
	eventually(t, 20*time.Second, "the rotated certificate to be served", func() bool {
		got, err := served(second)
		return err == nil && got.SerialNumber.Int64() == 2
	})
}
