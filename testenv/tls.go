package testenv

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// TLSServerName is the name (and 127.0.0.1 the address) the servers'
// certificates are issued for; a client verifying it must ask for this
// name or the IP.
const TLSServerName = "localhost"

// keytoolTimeout bounds one keytool run (a JVM start on a loaded machine).
const keytoolTimeout = time.Minute

// Client certificate policies of a secure client port, ZooKeeper's
// ssl.clientAuth values.
const (
	ClientAuthWant = "want" // a certificate is asked for and verified when sent
	ClientAuthNeed = "need" // a connection without a trusted certificate is refused
	ClientAuthNone = "none" // no certificate is asked for
)

// TLSOptions give every server a secure client port besides its plain one
// (ZooKeeper's Netty connection factory and secureClientPort). The servers'
// keystore and truststore (PKCS#12, made with the JDK's keytool in the
// cluster's directory) and a client certificate are created fresh for each
// cluster; the plain port stays for four-letter words and plain clients.
type TLSOptions struct {
	// ClientAuth is ZooKeeper's ssl.clientAuth: ClientAuthWant (the
	// default), ClientAuthNeed or ClientAuthNone.
	ClientAuth string

	// Names, when set, are the only names the servers' certificate is
	// issued for (DNS subject alternative names, the first also its common
	// name), without 127.0.0.1 or TLSServerName: a client must then verify
	// one of these names. Default: TLSServerName and 127.0.0.1.
	Names []string
}

// TLSFiles are a TLS cluster's client-side files, PEM encoded, kept until
// the cluster's Close.
type TLSFiles struct {
	CAFile   string // the servers' certificate (self-signed, a CA): what clients trust
	CertFile string // a client certificate the servers trust (self-signed, CN=zkelect-test-client)
	KeyFile  string // the client certificate's private key
	// ClientCAFile and ClientCAKeyFile are a CA the servers trust for
	// client certificates, and its key: IssueClientCertificate signs
	// certificates of any subject with it.
	ClientCAFile, ClientCAKeyFile string
}

// IssueClientCertificate returns a client certificate the servers trust,
// signed by the cluster's client CA (ClientCAFile), for the subject
// rawSubject (a DER-encoded RDNSequence, as x509.Certificate.RawSubject:
// any attributes, order and multi-valued RDNs), with a fresh key.
func (f TLSFiles) IssueClientCertificate(rawSubject []byte) (tls.Certificate, error) {
	ca, err := tls.LoadX509KeyPair(f.ClientCAFile, f.ClientCAKeyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load the client CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parse the client CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("client key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, RawSubject: rawSubject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("client certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Certificate[0]}, PrivateKey: key}, nil
}

// ClientConfig returns a TLS configuration trusting the cluster's CA and
// checking the server name TLSServerName; with cert it also presents the
// client certificate.
func (f TLSFiles) ClientConfig(cert bool) (*tls.Config, error) {
	ca, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", f.CAFile)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: TLSServerName, MinVersion: tls.VersionTLS12}
	if cert {
		pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// tlsMaterial is what the servers' configuration names: the stores and
// their password, and the client-side files.
type tlsMaterial struct {
	keyStore, trustStore, password string
	client                         TLSFiles
}

// keytoolJVM keeps each keytool run's JVM start short.
var keytoolJVM = []string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-XX:-UsePerfData", "-J-Xshare:auto"}

// makeTLS creates, in dir, the servers' keystore (a self-signed
// certificate for 127.0.0.1 and TLSServerName, which is also the clients'
// CA) and truststore (holding the client certificate, self-signed, made
// here) with the JDK's keytool, found beside java. The two keytool chains
// run side by side.
func makeTLS(ctx context.Context, dir, java string, names []string) (tlsMaterial, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tlsMaterial{}, fmt.Errorf("create TLS dir: %w", err)
	}
	kt, err := findKeytool(java)
	if err != nil {
		return tlsMaterial{}, err
	}
	pw, err := randomHex(12)
	if err != nil {
		return tlsMaterial{}, err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	m := tlsMaterial{keyStore: p("server.p12"), trustStore: p("trust.p12"), password: pw,
		client: TLSFiles{CAFile: p("ca.pem"), CertFile: p("client.pem"), KeyFile: p("client-key.pem"),
			ClientCAFile: p("client-ca.pem"), ClientCAKeyFile: p("client-ca-key.pem")}}
	if err := writeClientCertificate(m.client.CertFile, m.client.KeyFile); err != nil {
		return tlsMaterial{}, err
	}
	if err := writeClientCA(m.client.ClientCAFile, m.client.ClientCAKeyFile); err != nil {
		return tlsMaterial{}, err
	}
	run := func(args ...string) error {
		return keytool(ctx, kt, append(append(append([]string{}, keytoolJVM...), args...), "-storepass", pw)...)
	}
	store := func(path string) []string { return []string{"-keystore", path, "-storetype", "PKCS12"} }
	cn, san := TLSServerName, "ip:127.0.0.1,dns:"+TLSServerName
	if len(names) > 0 {
		cn, san = names[0], "dns:"+strings.Join(names, ",dns:")
	}
	server := [][]string{
		join([]string{"-genkeypair", "-alias", "server", "-dname", "CN=" + cn,
			"-keyalg", "EC", "-groupname", "secp256r1", "-validity", "7",
			"-ext", "san=" + san, "-ext", "bc:c", "-ext", "eku=serverAuth,clientAuth"}, store(m.keyStore)),
		join([]string{"-exportcert", "-rfc", "-alias", "server", "-file", m.client.CAFile}, store(m.keyStore)),
	}
	trust := [][]string{
		join([]string{"-importcert", "-noprompt", "-alias", "client", "-file", m.client.CertFile}, store(m.trustStore)),
		join([]string{"-importcert", "-noprompt", "-alias", "clientca", "-file", m.client.ClientCAFile}, store(m.trustStore)),
	}
	errc := make(chan error, 1)
	go func() {
		var err error
		for _, tr := range trust {
			if err = run(tr...); err != nil {
				break
			}
		}
		errc <- err
	}()
	for _, s := range server {
		if err = run(s...); err != nil {
			break
		}
	}
	if terr := <-errc; err == nil {
		err = terr
	}
	return m, err
}

func join(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// findKeytool returns the keytool of the runtime that java belongs to, or
// keytool on PATH.
func findKeytool(java string) (string, error) {
	candidates := []string{filepath.Join(filepath.Dir(java), "keytool")}
	if real, err := filepath.EvalSymlinks(java); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(real), "keytool"))
	}
	for _, c := range candidates {
		if isFile(c) {
			return c, nil
		}
	}
	if p, err := exec.LookPath("keytool"); err == nil {
		return p, nil
	}
	return "", ErrKeytoolNotFound
}

// keytool runs the JDK's keytool with args, failing with its output.
func keytool(ctx context.Context, path string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, keytoolTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("keytool %s: %w: %s", args[0], err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// writeClientCertificate makes the client's key (written to keyFile) and
// a self-signed certificate for it (written to certFile), which the
// servers' truststore holds.
func writeClientCertificate(certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("client key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode client key: %w", err)
	}
	if err := writePEM(keyFile, "PRIVATE KEY", der); err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return fmt.Errorf("serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "zkelect-test-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{TLSServerName},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	return writePEM(certFile, "CERTIFICATE", cert)
}

// writeClientCA makes a CA for client certificates (key written to
// keyFile, self-signed certificate to certFile), which the servers'
// truststore holds (TLSFiles.IssueClientCertificate).
func writeClientCA(certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("client CA key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode client CA key: %w", err)
	}
	if err := writePEM(keyFile, "PRIVATE KEY", der); err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zkelect-test-client-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("client CA certificate: %w", err)
	}
	return writePEM(certFile, "CERTIFICATE", cert)
}

func writePEM(path, kind string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
