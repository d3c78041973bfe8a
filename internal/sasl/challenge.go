package sasl

import (
	"fmt"
	"slices"
	"strings"
)

// challenge is what the client uses of a digest-challenge.
type challenge struct {
	realms []string
	nonce  string
	utf8   bool // charset=utf-8
}

// parseChallenge parses a digest-challenge (RFC 2831 section 2.1.1): a
// comma-separated list of name=value directives, each value a token or a
// quoted-string. It requires one nonce, algorithm=md5-sess and, when
// qop-options are given, "auth" among them.
func parseChallenge(s string) (challenge, error) {
	var c challenge
	seen := map[string]bool{}
	qops := []string{"auth"} // the default when qop is absent
	for s = strings.TrimSpace(s); s != ""; {
		name, value, rest, err := nextDirective(s)
		if err != nil {
			return c, err
		}
		s = rest
		name = strings.ToLower(name)
		if name != "realm" && seen[name] {
			return c, fmt.Errorf("%w: directive %s given twice", ErrBadChallenge, name)
		}
		seen[name] = true
		switch name {
		case "realm":
			c.realms = append(c.realms, value)
		case "nonce":
			c.nonce = value
		case "qop":
			qops = splitList(value)
		case "charset":
			if !strings.EqualFold(value, "utf-8") {
				return c, fmt.Errorf("%w: charset %q", ErrBadChallenge, value)
			}
			c.utf8 = true
		case "algorithm":
			if !strings.EqualFold(value, "md5-sess") {
				return c, fmt.Errorf("%w: algorithm %q, want md5-sess", ErrBadChallenge, value)
			}
		}
	}
	switch {
	case c.nonce == "":
		return c, fmt.Errorf("%w: no nonce", ErrBadChallenge)
	case !seen["algorithm"]:
		return c, fmt.Errorf("%w: no algorithm", ErrBadChallenge)
	case !slices.Contains(qops, "auth"):
		return c, fmt.Errorf("%w: qop %v without auth (integrity and privacy layers are not supported)", ErrBadChallenge, qops)
	}
	return c, nil
}

// nextDirective splits the first name=value off s, returning the rest
// after the separating comma.
func nextDirective(s string) (name, value, rest string, err error) {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return "", "", "", fmt.Errorf("%w: directive %q has no name=value", ErrBadChallenge, truncate(s))
	}
	name, s = strings.TrimSpace(s[:eq]), strings.TrimLeft(s[eq+1:], " \t")
	if strings.HasPrefix(s, `"`) {
		value, s, err = unquote(s)
		if err != nil {
			return "", "", "", err
		}
	} else {
		end := strings.IndexByte(s, ',')
		if end < 0 {
			end = len(s)
		}
		value, s = strings.TrimSpace(s[:end]), s[end:]
	}
	s = strings.TrimLeft(s, " \t")
	if s != "" && s[0] != ',' {
		return "", "", "", fmt.Errorf("%w: junk after directive %s", ErrBadChallenge, name)
	}
	return name, value, strings.TrimLeft(strings.TrimPrefix(s, ","), " \t,"), nil
}

// unquote reads a quoted-string at the start of s (backslash escapes any
// character), returning its value and what follows it.
func unquote(s string) (value, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
			if i == len(s) {
				return "", "", fmt.Errorf("%w: unterminated quoted string", ErrBadChallenge)
			}
			b.WriteByte(s[i])
		case '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", fmt.Errorf("%w: unterminated quoted string", ErrBadChallenge)
}

// splitList splits a comma-separated qop list inside a quoted value.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.ToLower(p))
		}
	}
	return out
}
