package recipe

import (
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file names a client certificate's subject as ZooKeeper's
// X509AuthenticationProvider does: the x509 id the server grants a TLS
// session is Java's X500Principal.getName(), the RFC 2253 form of the
// subject as the certificate encodes it. Go's pkix.Name.String differs
// (its own order of attributes, multi-valued RDNs split, other keywords,
// other hex): compared with what the server stored, it would not match
// the group's own znodes for subjects with DC, serialNumber or UID.
// The rules, as Java's sun.security.x509 applies them:
//
//   - RDNs from the last in the certificate to the first, joined by ",";
//     the attributes of a multi-valued RDN in their encoded order, by "+".
//   - The type as a keyword for CN, C, L, ST, O, OU, STREET, DC and UID
//     only; any other as its dotted OID (serialNumber is 2.5.4.5).
//   - A value under a dotted OID, or not of a string type Java reads
//     (UTF8String, PrintableString, TeletexString, IA5String,
//     GeneralString, BMPString), as '#' and the lowercase hex of its whole
//     DER encoding (tag and length included).
//   - Any other value as its bytes read as UTF-8, with a backslash before
//     each of , = + < > # ; " \, NUL written \00, and a backslash before
//     each leading or trailing space or carriage return.

// rfc2253Keywords are the attribute types Java writes by keyword in RFC
// 2253 form, by dotted OID.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// DER tags of the string types Java writes as text in RFC 2253 form.
var rfc2253StringTags = map[int]bool{
	asn1.TagUTF8String:      true,
	asn1.TagPrintableString: true,
	asn1.TagT61String:       true,
	asn1.TagIA5String:       true,
	asn1.TagGeneralString:   true,
	asn1.TagBMPString:       true,
}

// rdnAttribute is one AttributeTypeAndValue, its value kept as encoded.
type rdnAttribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rdnSET is one RelativeDistinguishedName (the SET suffix makes
// encoding/asn1 read a SET OF).
type rdnSET []rdnAttribute

// x509ID returns the x509 id ZooKeeper gives a session whose client
// certificate has the DER-encoded subject raw (x509.Certificate's
// RawSubject), or an error for a subject that does not parse.
func x509ID(raw []byte) (string, error) {
	var rdns []rdnSET
	rest, err := asn1.Unmarshal(raw, &rdns)
	if err != nil {
		return "", fmt.Errorf("parse the certificate's subject: %w", err)
	}
	if len(rest) > 0 {
		return "", errors.New("parse the certificate's subject: trailing data")
	}
	parts := make([]string, 0, len(rdns))
	for i := len(rdns) - 1; i >= 0; i-- {
		avas := make([]string, len(rdns[i]))
		for j, a := range rdns[i] {
			avas[j] = rfc2253Attribute(a)
		}
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(parts, ","), nil
}

// rfc2253Attribute writes one attribute as type=value (see the file's
// comment).
func rfc2253Attribute(a rdnAttribute) string {
	oid := a.Type.String()
	keyword, ok := rfc2253Keywords[oid]
	if !ok || a.Value.Class != asn1.ClassUniversal || !rfc2253StringTags[a.Value.Tag] {
		name := keyword
		if !ok {
			name = oid
		}
		return name + "=#" + hex.EncodeToString(a.Value.FullBytes)
	}
	return keyword + "=" + rfc2253Value(a.Value.Bytes)
}

// rfc2253Value escapes a string value's bytes, read as UTF-8.
func rfc2253Value(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b) // an invalid byte reads as U+FFFD, as in Java
		b = b[n:]
		switch {
		case strings.ContainsRune(`,=+<>#;"\`, r):
			s.WriteByte('\\')
			s.WriteRune(r)
		case r == 0:
			s.WriteString(`\00`)
		default:
			s.WriteRune(r)
		}
	}
	v := s.String()
	lead := len(v) - len(strings.TrimLeft(v, " \r"))
	if lead == len(v) {
		return escapeEach(v)
	}
	trail := len(v) - len(strings.TrimRight(v, " \r"))
	return escapeEach(v[:lead]) + v[lead:len(v)-trail] + escapeEach(v[len(v)-trail:])
}

// escapeEach puts a backslash before each byte of s (spaces and carriage
// returns).
func escapeEach(s string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteByte('\\')
		b.WriteByte(s[i])
	}
	return b.String()
}
