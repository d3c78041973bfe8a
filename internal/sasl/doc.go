// Package sasl holds the client side of the SASL mechanisms zkelect speaks
// to ZooKeeper: DIGEST-MD5 (RFC 2831), the mechanism of ZooKeeper's
// SASLAuthenticationProvider with a JAAS DigestLoginModule. Only the
// authentication exchange is done (quality of protection "auth"): ZooKeeper
// clients rely on TLS, not on a SASL security layer, to protect the
// connection. GSSAPI (Kerberos) is not implemented.
//
// The package knows nothing of ZooKeeper's framing: the connection layer
// carries the tokens in its sasl requests.
package sasl
