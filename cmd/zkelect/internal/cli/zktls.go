package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
)

// Environment variables of the TLS flags.
const (
	envZKTLSCA         = "ZKELECT_ZK_TLS_CA"
	envZKTLSCert       = "ZKELECT_ZK_TLS_CERT"
	envZKTLSKey        = "ZKELECT_ZK_TLS_KEY"
	envZKTLSServerName = "ZKELECT_ZK_TLS_SERVER_NAME"
)

// tlsFlags make a command connect to ZooKeeper's secure client port.
type tlsFlags struct {
	ca, cert, key, serverName string
}

func (f *tlsFlags) register(fs *pflag.FlagSet) {
	str := func(p *string, name, env, usage string) {
		fs.StringVar(p, name, os.Getenv(env), usage+" (default $"+env+")")
		hideDefault(fs, name)
	}
	str(&f.ca, "zk-tls-ca", envZKTLSCA,
		"connect to ZooKeeper over TLS (its secureClientPort), trusting the CA certificates in this PEM file")
	str(&f.cert, "zk-tls-cert", envZKTLSCert, "client certificate (PEM) to present over TLS, for servers with ssl.clientAuth=need")
	str(&f.key, "zk-tls-key", envZKTLSKey, "private key (PEM) of --zk-tls-cert")
	str(&f.serverName, "zk-tls-server-name", envZKTLSServerName,
		"name the servers' certificates must be valid for (default: the host of each --zk entry)")
}

// enabled reports whether any TLS flag is given.
func (f *tlsFlags) enabled() bool {
	return f.ca != "" || f.cert != "" || f.key != "" || f.serverName != ""
}

// config returns the TLS configuration the flags describe, or nil when
// none is given. Errors name the flag and the fix.
func (f *tlsFlags) config() (*tls.Config, error) {
	if !f.enabled() {
		return nil, nil
	}
	if f.ca == "" {
		return nil, errors.New("TLS to ZooKeeper needs --zk-tls-ca: the PEM file of the CA that signed the servers' certificates")
	}
	pem, err := os.ReadFile(f.ca)
	if err != nil {
		return nil, fmt.Errorf("read --zk-tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--zk-tls-ca %s holds no PEM certificate", f.ca)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: f.serverName, MinVersion: tls.VersionTLS12}
	switch {
	case f.cert == "" && f.key == "":
	case f.cert == "" || f.key == "":
		return nil, errors.New("--zk-tls-cert and --zk-tls-key go together: pass both")
	default:
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("load --zk-tls-cert %s / --zk-tls-key %s: %w", f.cert, f.key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
