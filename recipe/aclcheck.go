package recipe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"
)

// This file checks, before a secured member trusts an existing znode, that
// nobody outside its ACL can delete or change it. ZooKeeper checks a
// delete against the parent's ACL and a create of a child against the
// znode's own, so an election path (or a partition root) made by someone
// else, open, lets that someone delete the leader's znode or plant a
// candidate that never leaves, whatever ACL the members give their own
// znodes.

// ACLCheck says what a candidate (WithACLCheck) or a partition member
// (partition.Config.ACLCheck) does when an existing znode it relies on
// lets identities outside its ACL delete or change it (see CheckACL).
type ACLCheck uint8 // uint8: it packs beside the candidate's flags (see TestCandidateFitsItsSizeClass)

const (
	// ACLCheckRefuse (the default) fails the campaign or the start with an
	// *UnsafeACLError.
	ACLCheckRefuse ACLCheck = iota
	// ACLCheckWarn accepts the znode, logging the *UnsafeACLError as a
	// warning each time it is found.
	ACLCheckWarn
	// ACLCheckOff skips the check: for callers that check the path
	// themselves (a partition member checks its root once at start).
	ACLCheckOff
)

// UnsafeACLError reports a znode a secured member relies on whose ACL
// lets others delete or change it: Path, its ACL as read, and Grants, the
// entries of it that grant identities outside the member's ACL the
// permissions that matter there (on the znode: create, delete, write,
// admin; on its parent: delete, admin). A parent whose ACL the session
// may not read (ZooKeeper answers getACL to read or admin permission
// only: an administrator's locked prefix, or someone else's znode) proves
// nothing either way: ACL and Grants are then nil. It matches
// ErrUnsafeACL.
type UnsafeACLError struct {
	Path   string
	ACL    []zk.ACL
	Grants []zk.ACL

	hint string // why an entry could not be proved the member's (hiddenDigests)
}

// Error names the znode, its ACL and the entries that grant others, in
// zkCli's notation with digest hashes written x, and the fixes.
func (e *UnsafeACLError) Error() string {
	if e.Path == "/" {
		return fmt.Sprintf("recipe: ZooKeeper's root / has ACL %s: %s may delete or change what lies directly below it "+
			"(/ is open in a fresh ensemble and cannot be deleted); put the path at least two levels deep (/apps/billing), "+
			"narrow /'s ACL (zkCli setAcl), or accept it explicitly", formatRedacted(e.ACL), formatRedacted(e.Grants))
	}
	if e.ACL == nil {
		return fmt.Sprintf("recipe: this member cannot read the ACL of %s (ZooKeeper shows it to read or admin permission only), "+
			"so nothing proves that others may not delete the znode below it; grant the group read on it (zkCli setAcl), "+
			"or accept it explicitly", e.Path)
	}
	return fmt.Sprintf("recipe: %s has ACL %s: %s may delete or change it, not only this member's ACL%s; "+
		"give it the group's ACL (zkCli setAcl) or delete it while no member runs, or accept it explicitly",
		e.Path, formatRedacted(e.ACL), formatRedacted(e.Grants), e.hint)
}

// hiddenDigests names the cause when acl holds a digest id of a user of
// own as ZooKeeper shows it to a session without admin permission on the
// znode: user:x, the password's hash hidden (FinalRequestProcessor's
// getACL), so the check cannot tell the group's own entry from one of the
// same user name with another password. It returns "" when no such digest
// is hidden.
func hiddenDigests(acl, own []zk.ACL) string {
	users := map[string]bool{}
	for _, o := range own {
		if user, _, ok := strings.Cut(o.ID, ":"); ok && o.Scheme == "digest" {
			users[user] = true
		}
	}
	for _, e := range acl {
		if user, hash, _ := strings.Cut(e.ID, ":"); e.Scheme == "digest" && hash == "x" && users[user] {
			return " (ZooKeeper hides the hash of a digest id, user:x, from a session without admin permission " +
				"on the znode, so its entry cannot be told from another password's: give the group admin (a) there)"
		}
	}
	return ""
}

// Unwrap makes errors.Is(err, ErrUnsafeACL) true.
func (e *UnsafeACLError) Unwrap() error { return ErrUnsafeACL }

// Permissions that let another identity take an election from its
// members: on the znode itself (plant or delete children, change its data
// or ACL), and on its parent (delete it while empty, or give itself that
// right).
const (
	unsafeOnZnode  = zk.PermCreate | zk.PermDelete | zk.PermWrite | zk.PermAdmin
	unsafeOnParent = zk.PermDelete | zk.PermAdmin
)

// CheckACL reads the ACL of path and of its parent (getACL; not of "/"'s
// parent) and returns an *UnsafeACLError for the first that grants an
// identity what acl does not (see UnsafeACLError for the permissions that
// count). acl is the ACL the caller gives its znodes: entries of scheme
// "auth" (GroupACL) stand for sess's own identities (WithDigestAuth's
// digest, WithSASL's user, the x509 subject of WithTLS's client
// certificate, from Certificates or GetClientCertificate). An acl that lets anyone change things (world:anyone with
// any permission beyond read) is not secured: nothing is checked. A
// missing znode is no failure (the caller creates it with acl). A parent
// whose ACL the session may not read is an *UnsafeACLError with a nil
// ACL. Other errors are the session's (Session.Get's), wrapped with the
// path.
// ZooKeeper's own root "/" is open by default (world:anyone:cdrwa), so a
// secured election directly under it is refused until the operator
// narrows "/"'s ACL or the caller accepts it.
func CheckACL(ctx context.Context, sess *Session, p string, acl []zk.ACL) error {
	if sess == nil {
		return ErrNilSession
	}
	if !secured(acl) {
		return nil
	}
	own := sess.expandACL(acl)
	if err := checkZnodeACL(ctx, sess, p, own, unsafeOnZnode); err != nil || p == "/" {
		return err
	}
	return checkZnodeACL(ctx, sess, path.Dir(p), own, unsafeOnParent)
}

// checkZnodeACL checks one znode's ACL against own for the permissions in
// mask. A znode (not a parent) whose ACL grants neither the session's
// identities nor an entry of own any of the permissions in mask belongs
// to someone else: that is ErrACLDenied (the member lacks the group's
// credentials), not an open znode. Entries of own count because not every
// scheme is an identity the session logged in with: ZooKeeper grants
// ip:addr (or ip:addr/bits) to every connection from that address.
func checkZnodeACL(ctx context.Context, sess *Session, p string, own []zk.ACL, mask int32) error {
	got, _, err := sess.GetACL(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if mask == unsafeOnParent && errors.Is(err, zk.ErrNoAuth) {
		return &UnsafeACLError{Path: p}
	}
	if err != nil {
		return fmt.Errorf("read the ACL of %s: %w", p, denied(err))
	}
	if mask == unsafeOnZnode && (sess.grantedToSession(got)|grantedToOwn(got, own))&mask == 0 {
		return fmt.Errorf("%s has ACL %s, which grants this session's identities (%s) no change%s: %w: %w",
			p, formatRedacted(got), formatRedacted(sess.identities()), hiddenDigests(got, own), ErrACLDenied, zk.ErrNoAuth)
	}
	var grants []zk.ACL
	for _, e := range got {
		if extra := e.Perms & mask &^ granted(own, e.Scheme, e.ID); extra != 0 {
			grants = append(grants, zk.ACL{Scheme: e.Scheme, ID: e.ID, Perms: extra})
		}
	}
	if grants != nil {
		return &UnsafeACLError{Path: p, ACL: got, Grants: grants, hint: hiddenDigests(grants, own)}
	}
	return nil
}

// secured reports whether acl keeps anyone from changing things.
func secured(acl []zk.ACL) bool {
	return granted(acl, "world", "anyone")&unsafeOnZnode == 0
}

// granted returns the permissions acl grants scheme:id.
func granted(acl []zk.ACL, scheme, id string) int32 {
	var p int32
	for _, a := range acl {
		if a.Scheme == scheme && a.ID == id {
			p |= a.Perms
		}
	}
	return p
}

// grantedToOwn returns the permissions acl grants the entries of own.
func grantedToOwn(acl, own []zk.ACL) int32 {
	var p int32
	for _, a := range own {
		p |= granted(acl, a.Scheme, a.ID)
	}
	return p
}

// grantedToSession returns the permissions acl grants this session: its
// own identities and world:anyone.
func (s *Session) grantedToSession(acl []zk.ACL) int32 {
	p := granted(acl, "world", "anyone")
	for _, id := range s.identities() {
		p |= granted(acl, id.Scheme, id.ID)
	}
	return p
}

// expandACL returns acl with each "auth" entry replaced by the session's
// identities, as ZooKeeper stores it (fixupACL): digest, sasl and x509.
func (s *Session) expandACL(acl []zk.ACL) []zk.ACL {
	var out []zk.ACL
	for _, a := range acl {
		if a.Scheme != "auth" {
			out = append(out, a)
			continue
		}
		for _, id := range s.identities() {
			out = append(out, zk.ACL{Scheme: id.Scheme, ID: id.ID, Perms: a.Perms})
		}
	}
	return out
}

// identities returns the session's authenticated identities (perms unset).
func (s *Session) identities() []zk.ACL {
	var ids []zk.ACL
	for _, a := range s.cfg.auth {
		if user, password, ok := strings.Cut(a.auth, ":"); ok && a.scheme == "digest" {
			ids = append(ids, zk.DigestACL(0, user, password)...)
		}
	}
	if s.cfg.sasl != nil {
		ids = append(ids, zk.ACL{Scheme: "sasl", ID: s.cfg.sasl.User})
	}
	if leaf := clientCertificate(s.cfg.tls); leaf != nil {
		if cert, err := x509.ParseCertificate(leaf); err == nil {
			if id, err := x509ID(cert.RawSubject); err == nil { // as ZooKeeper names it (x509id.go)
				ids = append(ids, zk.ACL{Scheme: "x509", ID: id})
			}
		}
	}
	return ids
}

// clientCertificate returns the DER of the client certificate t presents
// (nil: none): Certificates' first, or else what GetClientCertificate
// returns now for a request without constraints (a certificate that
// rotates is the one it gives every handshake; the server's CA list is
// not known here).
func clientCertificate(t *tls.Config) []byte {
	switch {
	case t == nil:
		return nil
	case len(t.Certificates) > 0 && len(t.Certificates[0].Certificate) > 0:
		return t.Certificates[0].Certificate[0]
	case t.GetClientCertificate != nil:
		if c, err := t.GetClientCertificate(&tls.CertificateRequestInfo{}); err == nil && c != nil && len(c.Certificate) > 0 {
			return c.Certificate[0]
		}
	}
	return nil
}

// FormatACL formats acl in zkCli's notation: scheme:id:perms entries
// (perms as letters of cdrwa), comma-separated.
func FormatACL(acl []zk.ACL) string {
	parts := make([]string, len(acl))
	for i, a := range acl {
		parts[i] = a.Scheme + ":" + a.ID + ":" + permLetters(a.Perms)
	}
	return strings.Join(parts, ",")
}

// formatRedacted is FormatACL with each digest id's hash written x, as
// ZooKeeper shows it to a session without admin permission: the hash is
// SHA-1 of user:password, open to a dictionary attack, and errors end in
// logs.
func formatRedacted(acl []zk.ACL) string {
	out := make([]zk.ACL, len(acl))
	for i, a := range acl {
		if user, _, ok := strings.Cut(a.ID, ":"); ok && a.Scheme == "digest" {
			a.ID = user + ":x"
		}
		out[i] = a
	}
	return FormatACL(out)
}

// permLetters returns perms as zkCli writes them.
func permLetters(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit    int32
		letter byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.letter)
		}
	}
	return b.String()
}
