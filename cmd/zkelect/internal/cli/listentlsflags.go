package cli

import (
	"crypto/tls"
	"os"

	"github.com/spf13/pflag"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/zkelectd"
)

// Environment variables of the daemon's HTTP TLS flags.
const (
	envListenTLSCert = "ZKELECT_LISTEN_TLS_CERT"
	envListenTLSKey  = "ZKELECT_LISTEN_TLS_KEY"
)

// listenTLSFlags make the daemon's read-only HTTP endpoint serve HTTPS.
type listenTLSFlags struct {
	cert, key string
}

func (f *listenTLSFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.cert, "listen-tls-cert", os.Getenv(envListenTLSCert),
		"serve --listen over HTTPS with this PEM certificate (chain) file, re-read when it changes (default $"+envListenTLSCert+")")
	hideDefault(fs, "listen-tls-cert")
	fs.StringVar(&f.key, "listen-tls-key", os.Getenv(envListenTLSKey),
		"the PEM private key of --listen-tls-cert (default $"+envListenTLSKey+")")
	hideDefault(fs, "listen-tls-key")
}

// config returns the server TLS configuration, or nil without the flags
// (zkelectd.ListenTLSConfig).
func (f *listenTLSFlags) config() (*tls.Config, error) {
	return zkelectd.ListenTLSConfig(f.cert, f.key)
}
