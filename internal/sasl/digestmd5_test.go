package sasl

import (
	"errors"
	"strings"
	"testing"
)

// TestDigestMD5RFC2831Example replays the example of RFC 2831 section 4
// (an IMAP login as chris with password secret): the response and the
// server's rspauth must be the RFC's.
func TestDigestMD5RFC2831Example(t *testing.T) {
	d := &DigestMD5{user: "chris", password: "secret", service: "imap", host: "elwood.innosoft.com", cnonce: "OA6MHXh6VqTrRk"}
	challenge := `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`
	resp, done, err := d.Step([]byte(challenge))
	if err != nil || done {
		t.Fatalf("Step(challenge) = %q, %v, %v; want a response", resp, done, err)
	}
	const want = `username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",cnonce="OA6MHXh6VqTrRk",nc=00000001,qop=auth,` +
		`digest-uri="imap/elwood.innosoft.com",response=d388dad90d4bbd760a152321f2143af7,charset=utf-8`
	if string(resp) != want {
		t.Fatalf("response\n got %s\nwant %s", resp, want)
	}
	if _, done, err := d.Step([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd")); err != nil || !done {
		t.Fatalf("Step(rspauth of the RFC) = %v, %v; want done", done, err)
	}
	if _, _, err := d.Step(nil); !errors.Is(err, ErrExchangeOver) {
		t.Fatalf("a third Step: %v; want ErrExchangeOver", err)
	}
}

func TestDigestMD5RefusesAForgedRspauth(t *testing.T) {
	d, err := NewDigestMD5("chris", "secret", "zookeeper", "zk-sasl-md5")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Step([]byte(`realm="zk-sasl-md5",nonce="abc",charset=utf-8,algorithm=md5-sess`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Step([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd")); !errors.Is(err, ErrServerNotVerified) {
		t.Fatalf("a wrong rspauth: %v; want ErrServerNotVerified", err)
	}
}

func TestDigestMD5RefusesBadChallenges(t *testing.T) {
	for name, c := range map[string]string{
		"no nonce":          `realm="r",algorithm=md5-sess`,
		"no algorithm":      `nonce="n"`,
		"md5 algorithm":     `nonce="n",algorithm=md5`,
		"only auth-conf":    `nonce="n",qop="auth-conf",algorithm=md5-sess`,
		"two nonces":        `nonce="n",nonce="m",algorithm=md5-sess`,
		"unterminated":      `nonce="n,algorithm=md5-sess`,
		"no value":          `nonce`,
		"junk after quote":  `nonce="n"x,algorithm=md5-sess`,
		"other charset":     `nonce="n",charset=latin1,algorithm=md5-sess`,
		"longer than limit": `nonce="` + strings.Repeat("n", maxChallenge) + `",algorithm=md5-sess`,
	} {
		d := &DigestMD5{user: "u", password: "p", service: "zookeeper", host: "zk-sasl-md5", cnonce: "c"}
		if _, _, err := d.Step([]byte(c)); !errors.Is(err, ErrBadChallenge) {
			t.Errorf("%s: Step(%.40q) = %v; want ErrBadChallenge", name, c, err)
		}
	}
}

func TestDigestMD5ParsesQuotingAndSpacing(t *testing.T) {
	c, err := parseChallenge(` realm="a\"b" , realm=second,, nonce="x\\y", qop="auth-int, auth" ,algorithm=md5-sess `)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.realms) != 2 || c.realms[0] != `a"b` || c.realms[1] != "second" || c.nonce != `x\y` {
		t.Fatalf("parsed %+v; want realms [a\"b second], nonce x\\y", c)
	}
	if got := quote(`a"b\c`); got != `"a\"b\\c"` {
		t.Fatalf("quote = %s", got)
	}
}

func TestDigestMD5EncodesLatin1WhenItCan(t *testing.T) {
	if got := encode("Müller", true); string(got) != "M\xfcller" {
		t.Errorf("encode(Müller) = %q; want ISO 8859-1", got)
	}
	if got := encode("日本", true); string(got) != "日本" {
		t.Errorf("encode(日本) = %q; want UTF-8", got)
	}
}
