package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

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
)

// authFlags are how a command authenticates to ZooKeeper.
type authFlags struct {
	scheme string // "" (none), authDigest or authSASL
	file   string // holds user:password
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
// --zk-auth. Errors name the flag and the fix.
func (a *authFlags) options() ([]recipe.SessionOption, error) {
	switch a.scheme {
	case "":
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
// $ZKELECT_ZK_CREDENTIALS.
func (a *authFlags) credentials() (user, password string, err error) {
	raw, from := os.Getenv(envZKCredentials), "$"+envZKCredentials
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
	return user, password, nil
}

// aclFlag is --acl: the ACL of the znodes a command creates.
type aclFlag struct{ value string }

func (f *aclFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.value, "acl", os.Getenv(envACL),
		"ACL of created znodes: "+aclGroup+" (only this identity may change or delete them, anyone may read; the default with --zk-auth), "+
			aclOpen+" (anyone may do anything; the default without), or scheme:id:perms entries, comma-separated, "+
			"e.g. digest:app:HASH=:cdrwa,world:anyone:r (default $"+envACL+")")
	hideDefault(fs, "acl")
}

// acl returns the ACL the flag names; authenticated says whether --zk-auth
// is given, which makes "group" the default.
func (f *aclFlag) acl(authenticated bool) ([]zk.ACL, error) {
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
		return recipe.GroupACL(), nil
	}
	return parseACL(v)
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
