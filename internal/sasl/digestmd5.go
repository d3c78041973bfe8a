package sasl

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Errors of a DIGEST-MD5 exchange; each is wrapped with the detail.
var (
	// ErrBadChallenge: the server's challenge breaks RFC 2831 (no nonce,
	// an algorithm other than md5-sess, a malformed directive) or asks for
	// a quality of protection other than "auth".
	ErrBadChallenge = errors.New("sasl: bad DIGEST-MD5 challenge")
	// ErrServerNotVerified: the server's final rspauth does not prove that
	// it knows the password (a server impersonating the real one).
	ErrServerNotVerified = errors.New("sasl: DIGEST-MD5 server not verified")
	// ErrExchangeOver: Step was called after the exchange ended.
	ErrExchangeOver = errors.New("sasl: DIGEST-MD5 exchange already over")
)

// maxChallenge bounds a challenge (RFC 2831 section 2.1.1: 2048 bytes).
const maxChallenge = 2048

// DigestMD5 is the client side of one DIGEST-MD5 authentication (RFC 2831
// section 2.1) with quality of protection "auth" and no authorization id,
// so the server authorizes the authentication id (the user). It is not
// safe for concurrent use; make one per connection.
//
// DIGEST-MD5 has no initial response: the client's first message is
// empty, and Step then takes the server's digest-challenge (returning the
// digest-response) and its response-auth (returning nothing, done).
type DigestMD5 struct {
	user, password  string
	service, host   string // digest-uri is service/host
	cnonce          string
	step            int
	expectedRspauth string
}

// NewDigestMD5 returns the client of one exchange as user with password,
// for the service ("zookeeper") on host (ZooKeeper's server name for
// DIGEST-MD5 is "zk-sasl-md5").
func NewDigestMD5(user, password, service, host string) (*DigestMD5, error) {
	cnonce, err := newCnonce()
	if err != nil {
		return nil, err
	}
	return &DigestMD5{user: user, password: password, service: service, host: host, cnonce: cnonce}, nil
}

func newCnonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("sasl: cnonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Step takes the server's next message and returns the client's answer;
// done reports that the exchange ended with the server verified. Errors
// wrap ErrBadChallenge, ErrServerNotVerified or ErrExchangeOver.
func (d *DigestMD5) Step(server []byte) (response []byte, done bool, err error) {
	d.step++
	switch d.step {
	case 1:
		r, err := d.respond(server)
		return r, false, err
	case 2:
		return nil, true, d.verify(server)
	default:
		return nil, true, ErrExchangeOver
	}
}

// respond computes the digest-response to a digest-challenge.
func (d *DigestMD5) respond(challenge []byte) ([]byte, error) {
	if len(challenge) > maxChallenge {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrBadChallenge, len(challenge), maxChallenge)
	}
	c, err := parseChallenge(string(challenge))
	if err != nil {
		return nil, err
	}
	realm := ""
	if len(c.realms) > 0 {
		realm = c.realms[0]
	}
	uri := d.service + "/" + d.host
	const nc, qop = "00000001", "auth"
	a1 := d.a1(realm, c.nonce, c.utf8)
	resp := kd(hexMD5(a1), c.nonce+":"+nc+":"+d.cnonce+":"+qop+":"+hexMD5([]byte("AUTHENTICATE:"+uri)))
	d.expectedRspauth = kd(hexMD5(a1), c.nonce+":"+nc+":"+d.cnonce+":"+qop+":"+hexMD5([]byte(":"+uri)))
	var b strings.Builder
	b.WriteString("username=" + quote(d.user))
	if len(c.realms) > 0 {
		b.WriteString(",realm=" + quote(realm))
	}
	b.WriteString(",nonce=" + quote(c.nonce) + ",cnonce=" + quote(d.cnonce) + ",nc=" + nc + ",qop=" + qop)
	b.WriteString(",digest-uri=" + quote(uri) + ",response=" + resp)
	if c.utf8 {
		b.WriteString(",charset=utf-8")
	}
	return []byte(b.String()), nil
}

// a1 is RFC 2831's A1 without authzid: H(user:realm:password):nonce:cnonce.
func (d *DigestMD5) a1(realm, nonce string, utf8 bool) []byte {
	var creds []byte
	creds = append(creds, encode(d.user, utf8)...)
	creds = append(creds, ':')
	creds = append(creds, encode(realm, utf8)...)
	creds = append(creds, ':')
	creds = append(creds, encode(d.password, utf8)...)
	sum := md5.Sum(creds)
	return append(sum[:], ":"+nonce+":"+d.cnonce...)
}

// verify checks the server's response-auth, rspauth=<hex>.
func (d *DigestMD5) verify(msg []byte) error {
	got, ok := strings.CutPrefix(string(msg), "rspauth=")
	if !ok {
		return fmt.Errorf("%w: final message %q is not rspauth=...", ErrServerNotVerified, truncate(string(msg)))
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(d.expectedRspauth)) != 1 {
		return fmt.Errorf("%w: rspauth does not match the password", ErrServerNotVerified)
	}
	return nil
}

// encode returns s as the bytes RFC 2831 hashes: ISO 8859-1 when charset
// utf-8 was not offered or every rune of s fits in it (section 2.1.2.1),
// UTF-8 otherwise.
func encode(s string, utf8Offered bool) []byte {
	latin1 := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			if utf8Offered {
				return []byte(s)
			}
			r = '?' // not representable: RFC 2831 leaves it undefined (Java writes '?')
		}
		latin1 = append(latin1, byte(r))
	}
	return latin1
}

func hexMD5(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// kd is RFC 2831's KD(k, s) = H(k:s), hex encoded.
func kd(k, s string) string { return hexMD5([]byte(k + ":" + s)) }

// quote makes a quoted-string, escaping '"' and '\'.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
