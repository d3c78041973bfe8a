package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// saslProvider is ZooKeeper's authentication provider for the sasl scheme.
const saslProvider = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"

// saslUserName is what a SASL user name may hold: JAAS option names are
// user_<name>, and ACL ids sasl:<name>.
var saslUserName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// checkSASLUsers validates Options.SASLUsers.
func checkSASLUsers(users map[string]string) error {
	for u, pw := range users {
		if !saslUserName.MatchString(u) {
			return &OptionsError{Field: "SASLUsers", Value: u, Reason: "want a user name of 1..64 letters, digits, '_', '.' or '-'"}
		}
		if pw == "" || strings.ContainsAny(pw, "\"\\\n") {
			return &OptionsError{Field: "SASLUsers", Value: u, Reason: "want a non-empty password without '\"', '\\' or newlines"}
		}
	}
	return nil
}

// writeJAAS writes the servers' JAAS configuration: a Server section with
// ZooKeeper's DigestLoginModule holding users' passwords, the accounts
// SASL DIGEST-MD5 clients log in as. It returns the file's path.
func writeJAAS(dir string, users map[string]string) (string, error) {
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required")
	for _, u := range names {
		fmt.Fprintf(&b, "\n  user_%s=\"%s\"", u, users[u])
	}
	b.WriteString(";\n};\n")
	path := filepath.Join(dir, "jaas.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("write JAAS configuration: %w", err)
	}
	return path, nil
}

// SetSASLUsers replaces the SASL accounts (user name to password) of a
// cluster started with Options.SASLUsers: servers started or restarted
// from now on accept these, so a test can change a password on the
// servers. It returns an *OptionsError for invalid users, and
// ErrBadOptions for a cluster without SASL.
func (c *Cluster) SetSASLUsers(users map[string]string) error {
	if len(users) == 0 {
		return &OptionsError{Field: "SASLUsers", Value: "", Reason: "want at least one user"}
	}
	if err := checkSASLUsers(users); err != nil {
		return err
	}
	if len(c.servers) == 0 || c.servers[0].security.jaas == "" {
		return fmt.Errorf("%w: the cluster was started without SASLUsers", ErrBadOptions)
	}
	_, err := writeJAAS(c.dir, users)
	return err
}

// RestartWithSASLUsers replaces the cluster's SASL accounts (as
// SetSASLUsers), then kills server i and starts it again, so that server
// alone accepts the new passwords: the rolling password change, or a
// server restarted with other credentials, that a test plays against its
// clients. Errors are SetSASLUsers', Kill's and Restart's.
func (c *Cluster) RestartWithSASLUsers(ctx context.Context, i int, users map[string]string) error {
	if err := c.SetSASLUsers(users); err != nil {
		return err
	}
	if err := c.Kill(i); err != nil {
		return err
	}
	return c.Restart(ctx, i)
}
