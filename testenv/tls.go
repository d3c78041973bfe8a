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
	"os"
	"os/exec"
	"path/filepath"
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
// (ZooKeeper's Netty connection factory and secureClientPort). A fresh CA,
// the servers' keystore and truststore (PKCS#12, made with the JDK's keytool
// in the cluster's directory) and a client certificate are created for each
// cluster; the plain port stays for four-letter words and plain clients.
type TLSOptions struct {
	// ClientAuth is ZooKeeper's ssl.clientAuth: ClientAuthWant (the
	// default), ClientAuthNeed or ClientAuthNone.
	ClientAuth string
}

// TLSFiles are a TLS cluster's client-side files, PEM encoded, kept until
// the cluster's Close.
type TLSFiles struct {
	CAFile   string // the CA certificate that issued the servers' and the client's certificates
	CertFile string // a client certificate (its subject is CN=zkelect-test-client)
	KeyFile  string // the client certificate's private key
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

// makeTLS creates a CA, the servers' keystore and truststore and a client
// certificate in dir with keytool, found beside java.
func makeTLS(ctx context.Context, dir, java string) (tlsMaterial, error) {
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
		client: TLSFiles{CAFile: p("ca.pem"), CertFile: p("client.pem"), KeyFile: p("client-key.pem")}}
	run := func(args ...string) error { return keytool(ctx, kt, append(args, "-storepass", pw)...) }
	store := func(path string) []string { return []string{"-keystore", path, "-storetype", "PKCS12"} }
	ca := store(p("ca.p12"))
	ec := []string{"-keyalg", "EC", "-groupname", "secp256r1", "-validity", "7"}
	san := "san=ip:127.0.0.1,dns:" + TLSServerName
	steps := [][]string{
		join([]string{"-genkeypair", "-alias", "ca", "-dname", "CN=zkelect testenv CA",
			"-ext", "bc:c", "-ext", "ku:c=keyCertSign,cRLSign"}, ca, ec),
		join([]string{"-exportcert", "-rfc", "-alias", "ca", "-file", m.client.CAFile}, ca),
		join([]string{"-genkeypair", "-alias", "server", "-dname", "CN=" + TLSServerName}, store(m.keyStore), ec),
		join([]string{"-certreq", "-alias", "server", "-file", p("server.csr")}, store(m.keyStore)),
		join([]string{"-gencert", "-rfc", "-alias", "ca", "-infile", p("server.csr"), "-outfile", p("server.pem"),
			"-ext", san, "-ext", "eku=serverAuth,clientAuth", "-validity", "7"}, ca),
		join([]string{"-importcert", "-noprompt", "-alias", "ca", "-file", m.client.CAFile}, store(m.keyStore)),
		join([]string{"-importcert", "-alias", "server", "-file", p("server.pem")}, store(m.keyStore)),
		join([]string{"-importcert", "-noprompt", "-alias", "ca", "-file", m.client.CAFile}, store(m.trustStore)),
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return tlsMaterial{}, err
		}
	}
	if err := writeClientRequest(p("client.csr"), m.client.KeyFile); err != nil {
		return tlsMaterial{}, err
	}
	err = run(join([]string{"-gencert", "-rfc", "-alias", "ca", "-infile", p("client.csr"), "-outfile", m.client.CertFile,
		"-ext", san, "-ext", "eku=clientAuth", "-validity", "7"}, ca)...)
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

// writeClientRequest makes the client's key (written to keyFile) and a
// certificate request for it (written to csrFile) for keytool to sign.
func writeClientRequest(csrFile, keyFile string) error {
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
	csr, err := x509.CreateCertificateRequest(rand.Reader,
		&x509.CertificateRequest{Subject: pkix.Name{CommonName: "zkelect-test-client"}}, key)
	if err != nil {
		return fmt.Errorf("client certificate request: %w", err)
	}
	return writePEM(csrFile, "CERTIFICATE REQUEST", csr)
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
