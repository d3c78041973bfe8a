package recipe_test

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// Attribute types of the subjects below.
var (
	oidCN           = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidSerialNumber = asn1.ObjectIdentifier{2, 5, 4, 5}
	oidC            = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidO            = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU           = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidDC           = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID          = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

// attr is one attribute of a subject, its value of the DER string type tag.
func attr(oid asn1.ObjectIdentifier, tag int, v string) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: oid, Value: asn1.RawValue{Tag: tag, Bytes: []byte(v)}}
}

// subject encodes rdns, the first as the certificate's first RDN.
func subject(t testing.TB, rdns ...[]pkix.AttributeTypeAndValue) []byte {
	t.Helper()
	var seq pkix.RDNSequence
	for _, r := range rdns {
		seq = append(seq, r)
	}
	raw, err := asn1.Marshal(seq)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// x509Subjects are subjects whose x509 id ZooKeeper forms otherwise than
// Go's pkix.Name.String, with the id ZooKeeper gives each.
func x509Subjects(t testing.TB) []struct {
	name string
	raw  []byte
	id   string
} {
	one := func(a ...pkix.AttributeTypeAndValue) []pkix.AttributeTypeAndValue { return a }
	return []struct {
		name string
		raw  []byte
		id   string
	}{
		{"domain components", subject(t, one(attr(oidDC, asn1.TagIA5String, "com")), one(attr(oidDC, asn1.TagIA5String, "example")),
			one(attr(oidCN, asn1.TagUTF8String, "alice"))), "CN=alice,DC=example,DC=com"},
		{"serial number", subject(t, one(attr(oidCN, asn1.TagUTF8String, "bob")), one(attr(oidSerialNumber, asn1.TagPrintableString, "42"))),
			"2.5.4.5=#13023432,CN=bob"},
		{"user id and escapes", subject(t, one(attr(oidO, asn1.TagUTF8String, "Org, Inc.")), one(attr(oidUID, asn1.TagUTF8String, "u1"))),
			`UID=u1,O=Org\, Inc.`},
		{"multi-valued RDN", subject(t, one(attr(oidC, asn1.TagPrintableString, "DE")),
			one(attr(oidCN, asn1.TagUTF8String, "carol"), attr(oidOU, asn1.TagUTF8String, "ops"))),
			"OU=ops+CN=carol,C=DE"}, // DER sorts a SET's members by their encoding
		{"e-mail and spaces", subject(t, one(attr(oidEmail, asn1.TagIA5String, "d@x")), one(attr(oidCN, asn1.TagUTF8String, " dave "))),
			`CN=\ dave\ ,1.2.840.113549.1.9.1=#1603644078`},
	}
}

// TestX509IDIsZooKeepers: the x509 id of a certificate's subject as
// ZooKeeper's X509AuthenticationProvider forms it (Java's
// X500Principal.getName()).
func TestX509IDIsZooKeepers(t *testing.T) {
	for _, c := range x509Subjects(t) {
		got, err := recipe.X509ID(c.raw)
		if err != nil || got != c.id {
			t.Errorf("%s: x509 id %q, %v; want %q", c.name, got, err, c.id)
		}
	}
	if _, err := recipe.X509ID([]byte{0x30, 0x03, 0x01}); err == nil {
		t.Error("a truncated subject parsed")
	}
}

// TestX509GroupOwnsItsZnodes: a candidate whose session's only identity is
// its client certificate, with GroupACL (ZooKeeper's "auth" scheme: the
// server stores the x509 id it gave the session), leads on the election
// path it made. Its check compares the ACL with the session's identities:
// with the subject as Go writes it, a certificate with DC, serialNumber,
// UID or a multi-valued RDN found its own znodes someone else's
// (ErrACLDenied). Against a real TLS ZooKeeper, whose stored id is also
// compared with the expected one.
func TestX509GroupOwnsItsZnodes(t *testing.T) {
	zks := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{}, MaxSessionTimeout: 20 * time.Second})
	files, _ := zks.TLSFiles()
	for _, c := range x509Subjects(t) {
		t.Run(c.name, func(t *testing.T) {
			cert, err := files.IssueClientCertificate(c.raw)
			if err != nil {
				t.Fatal(err)
			}
			cfg := clientTLS(t, files, false)
			cfg.Certificates = []tls.Certificate{cert}
			s := tlsSession(t, zks.SecureAddrs()[0], recipe.WithTLS(cfg), recipe.WithSessionTimeout(6*time.Second))
			p := securedElection(t)
			if _, err := s.Create(context.Background(), "/recipe-test", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				t.Fatal(err)
			}
			lead(t, candidate(t, s, p, recipe.WithACL(recipe.GroupACL())))
			acl, _, err := s.GetACL(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := recipe.FormatACL(acl), "x509:"+c.id+":cdrwa,world:anyone:r"; got != want {
				t.Errorf("ACL ZooKeeper stored for the election %s = %s; want %s", p, got, want)
			}
		})
	}
}
