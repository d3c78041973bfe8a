package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/zkconn"
	"github.com/zkelect/zkelect/recipe"
)

// Environment variables of the authentication and ACL flags. The
// credentials themselves have no flag: a command line is visible to every
// user of the machine (ps, /proc), a file or the environment is not.
const (
	envZKAuth        = "ZKELECT_ZK_AUTH"        // --zk-auth
	envZKAuthFile    = "ZKELECT_ZK_AUTH_FILE"   // --zk-auth-file
	envZKCredentials = "ZKELECT_ZK_CREDENTIALS" // user:password, when no file is given
	envACL           = "ZKELECT_ACL"            // --acl
)

// Values of --zk-auth and --acl.
const (
	authDigest = "digest"
	authSASL   = "sasl"
	aclOpen    = "open"
	aclGroup   = "group"
	// aclGroupX509 adds the client certificate's x509 identity to group's.
	aclGroupX509 = "group+x509"
)

// authFlags are how a command authenticates to ZooKeeper.
type authFlags struct {
	scheme string // "" (none), authDigest or authSASL
	file   string // holds user:password

	// read caches the credentials once read (credentials): the variable
	// they may come from is gone from the environment by then.
	read           bool
	user, password string
}

func (a *authFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.scheme, "zk-auth", os.Getenv(envZKAuth),
		"authenticate to ZooKeeper: digest (its digest scheme) or sasl (SASL DIGEST-MD5), as user:password from --zk-auth-file or $"+
			envZKCredentials+" (default $"+envZKAuth+")")
	hideDefault(fs, "zk-auth")
	fs.StringVar(&a.file, "zk-auth-file", os.Getenv(envZKAuthFile),
		"file holding the --zk-auth credentials as user:password on one line (default $"+envZKAuthFile+")")
	hideDefault(fs, "zk-auth-file")
}

// options returns the session options of the flags: none without
// --zk-auth, and then $ZKELECT_ZK_CREDENTIALS, unused, leaves this
// process's environment all the same, so that no child inherits it.
// Errors name the flag and the fix.
func (a *authFlags) options() ([]recipe.SessionOption, error) {
	switch a.scheme {
	case "":
		_ = os.Unsetenv(envZKCredentials)
		if a.file != "" {
			return nil, errors.New("--zk-auth-file given without --zk-auth: pass --zk-auth " + authDigest + " or " + authSASL)
		}
		return nil, nil
	case authDigest, authSASL:
	default:
		return nil, fmt.Errorf("invalid --zk-auth %q: use %s or %s (GSSAPI/Kerberos is not supported)", a.scheme, authDigest, authSASL)
	}
	user, password, err := a.credentials()
	if err != nil {
		return nil, err
	}
	if a.scheme == authSASL {
		return []recipe.SessionOption{recipe.WithSASL(user, password)}, nil
	}
	return []recipe.SessionOption{recipe.WithDigestAuth(user, password)}, nil
}

// warnLoosePermissions logs a warning when --zk-auth-file may be read by
// other users than its owner (as ssh does for keys).
func (a *authFlags) warnLoosePermissions(log zerolog.Logger) {
	if a.file == "" {
		return
	}
	if fi, err := os.Stat(a.file); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn().Str("file", a.file).Stringer("mode", fi.Mode().Perm()).
			Msg("--zk-auth-file is readable by other users; chmod 600 it")
	}
}

// credentials reads user:password from --zk-auth-file, else from
// $ZKELECT_ZK_CREDENTIALS, once: the first call removes the variable from
// this process's environment, so that no child (the watchdog, run's and
// --exec's children, the reaper) inherits it. A process of the same user
// can still read it in /proc/<pid>/environ (the environment the process
// was started with, which unsetenv does not change) or this process's
// memory, and the file --zk-auth-file names.
func (a *authFlags) credentials() (user, password string, err error) {
	if a.read {
		return a.user, a.password, nil
	}
	raw, from := os.Getenv(envZKCredentials), "$"+envZKCredentials
	_ = os.Unsetenv(envZKCredentials)
	if a.file != "" {
		b, err := os.ReadFile(a.file)
		if err != nil {
			return "", "", fmt.Errorf("read --zk-auth-file: %w", err)
		}
		raw, from = strings.TrimRight(string(b), "\r\n"), "--zk-auth-file "+a.file
	}
	if raw == "" {
		return "", "", fmt.Errorf("--zk-auth %s needs credentials: put user:password in a file named by --zk-auth-file, or in $%s",
			a.scheme, envZKCredentials)
	}
	user, password, ok := strings.Cut(raw, ":")
	if !ok || user == "" || password == "" || strings.ContainsAny(raw, "\n") {
		return "", "", fmt.Errorf("credentials in %s: want one line user:password", from)
	}
	a.read, a.user, a.password = true, user, password
	return user, password, nil
}

// warnInClear logs, once at connect, that digest credentials go to
// ZooKeeper in clear: its addauth request carries user:password as it is,
// and without TLS anyone on the path reads it (SASL DIGEST-MD5 sends a
// challenge response instead).
func (a *authFlags) warnInClear(log zerolog.Logger, tls bool) {
	if a.scheme == authDigest && !tls {
		log.Warn().Msg("--zk-auth digest over plain TCP: ZooKeeper's digest scheme sends user:password in clear; " +
			"use TLS (--zk-tls-ca) or --zk-auth sasl")
	}
}

// withAuthHint adds the fix to err when the ensemble ended the session for
// want of a SASL login (ZooKeeper's SESSIONCLOSEDREQUIRESASLAUTH, -124,
// with sessionRequireClientSASLAuth or enforce.auth.enabled): read alone,
// the code does not say that --zk-auth is what is missing. Other errors
// are returned as they are.
func withAuthHint(err error) error {
	var ce *zkconn.CodeError
	required := errors.As(err, &ce) && ce.Code == jute.CodeSessionClosedRequireSASL
	if !required && (err == nil || !strings.Contains(err.Error(), jute.CodeSessionClosedRequireSASL.String())) {
		return err
	}
	return fmt.Errorf("%w (the ensemble requires a SASL login: pass --zk-auth sasl, with user:password in --zk-auth-file or $%s)",
		err, envZKCredentials)
}

// aclFlag is --acl: the ACL of the znodes a command creates, and
// --accept-open-acl.
type aclFlag struct {
	value      string
	acceptOpen bool
}

func (f *aclFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.value, "acl", os.Getenv(envACL),
		"ACL of created znodes: "+aclGroup+" (only the --zk-auth identity may change or delete them, anyone may read; the default with --zk-auth), "+
			aclGroupX509+" (the --zk-auth identity and the --zk-tls-cert's x509 subject: anyone holding that certificate too), "+
			aclOpen+" (anyone may do anything; the default without), or scheme:id:perms entries, comma-separated, "+
			"e.g. digest:app:HASH=:cdrwa,world:anyone:r (default $"+envACL+")")
	hideDefault(fs, "acl")
	fs.BoolVar(&f.acceptOpen, "accept-open-acl", false,
		"with a secured --acl, run even when the election path or root, or its parent, already exists with an ACL "+
			"that lets others delete or change it (logged as a warning); without it such a path is refused")
}

// check returns what a secured command does with an existing path others
// may change (recipe.CheckACL).
func (f *aclFlag) check() recipe.ACLCheck {
	if f.acceptOpen {
		return recipe.ACLCheckWarn
	}
	return recipe.ACLCheckRefuse
}

// acl returns the ACL the flag names; auth is --zk-auth, which makes
// "group" the default, and cert says whether a client certificate is
// given (--zk-tls-cert). "group" names the --zk-auth identity alone
// (digest:user:hash, or sasl:user), never ZooKeeper's "auth" scheme: that
// one also grants the x509 identity of the client certificate, which
// everyone holding a shared keystore has. "group+x509" grants both.
func (f *aclFlag) acl(auth *authFlags, cert bool) ([]zk.ACL, error) {
	authenticated := auth.scheme != ""
	v := f.value
	if v == "" {
		v = aclOpen
		if authenticated {
			v = aclGroup
		}
	}
	switch v {
	case aclOpen:
		return zk.WorldACL(zk.PermAll), nil
	case aclGroup:
		if !authenticated {
			return nil, errors.New("--acl group grants the session's own identity, but no --zk-auth is given")
		}
		return groupACL(auth)
	case aclGroupX509:
		if !authenticated || !cert {
			return nil, errors.New("--acl group+x509 grants the --zk-auth identity and the client certificate's: give --zk-auth and --zk-tls-cert")
		}
		return recipe.GroupACL(), nil // "auth": every identity of the session
	}
	return parseACL(v)
}

// groupACL is all permissions for the --zk-auth identity, read for anyone.
func groupACL(auth *authFlags) ([]zk.ACL, error) {
	user, password, err := auth.credentials()
	if err != nil {
		return nil, err
	}
	own := zk.DigestACL(zk.PermAll, user, password)
	if auth.scheme == authSASL {
		own = []zk.ACL{{Perms: zk.PermAll, Scheme: "sasl", ID: user}}
	}
	return append(own, zk.WorldACL(zk.PermRead)...), nil
}

// parseACL parses comma-separated scheme:id:perms entries; id may itself
// hold colons (digest:user:hash), perms are letters of cdrwa.
func parseACL(s string) ([]zk.ACL, error) {
	var out []zk.ACL
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		first, last := strings.Index(entry, ":"), strings.LastIndex(entry, ":")
		if first <= 0 || last == first || last == len(entry)-1 {
			return nil, fmt.Errorf("invalid --acl entry %q: want scheme:id:perms, e.g. world:anyone:r", entry)
		}
		perms, err := parsePerms(entry[last+1:])
		if err != nil {
			return nil, fmt.Errorf("invalid --acl entry %q: %w", entry, err)
		}
		out = append(out, zk.ACL{Scheme: entry[:first], ID: entry[first+1 : last], Perms: perms})
	}
	return out, nil
}

// parsePerms parses ZooKeeper's permission letters (zkCli's notation).
func parsePerms(s string) (int32, error) {
	bits := map[rune]int32{'c': zk.PermCreate, 'd': zk.PermDelete, 'r': zk.PermRead, 'w': zk.PermWrite, 'a': zk.PermAdmin}
	var p int32
	for _, r := range s {
		b, ok := bits[r]
		if !ok {
			return 0, fmt.Errorf("permission %q is not one of c, d, r, w, a", r)
		}
		p |= b
	}
	return p, nil
}
