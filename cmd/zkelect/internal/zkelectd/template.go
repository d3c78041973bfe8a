package zkelectd

import (
	"strings"

	"github.com/zkelect/zkelect/zxidfence"
)

// ExecTemplate is the --exec command of the shards daemon, run with
// /bin/sh -c. {token} is replaced by the token in decimal. {shard} is
// replaced by a reference to the child's environment variable
// ZKELECT_SHARD (EnvShard), quoted for where it stands in the command: the
// shard id itself never becomes part of the shell's program, so an id such
// as "$(touch x)" is an argument and never a command, whether {shard}
// stands bare, in double quotes or in single quotes. Shard ids are the
// operator's input (--shards, --shards-file), as the command is.
type ExecTemplate string

// shardRef expands to the child's EnvShard.
const shardRef = "${" + EnvShard + "}"

// argv returns the command line for one shard's leadership; the child's
// environment must hold EnvShard=shard (runChild sets it).
func (t ExecTemplate) argv(_ string, token zxidfence.Token) []string {
	return []string{"/bin/sh", "-c", t.expand(token)}
}

// expand substitutes the placeholders in the template, following the
// shell's quoting (quote) so that the shard's reference expands to the id
// verbatim, as one word.
func (t ExecTemplate) expand(token zxidfence.Token) string {
	s := string(t)
	var out strings.Builder
	var q quoting
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "{shard}"):
			out.WriteString(q.shardRef())
			i += len("{shard}")
		case strings.HasPrefix(s[i:], "{token}"):
			out.WriteString(token.Decimal())
			i += len("{token}")
		default:
			n := q.step(s[i:])
			out.WriteString(s[i : i+n])
			i += n
		}
	}
	return out.String()
}

// quoting follows a POSIX shell command's quotes as it is read: single
// and double quotes, backslashes, and command substitutions ($(...) and
// `...`) that start a new unquoted context inside double quotes.
type quoting struct {
	stack  []byte // the open contexts: '\'', '"', '(' ($(...)), '`'; none: unquoted
	parens []int  // per open $( ...: parentheses opened inside it
}

// top returns the innermost open context, 0 when unquoted.
func (q *quoting) top() byte {
	if len(q.stack) == 0 {
		return 0
	}
	return q.stack[len(q.stack)-1]
}

func (q *quoting) push(c byte) { q.stack = append(q.stack, c) }
func (q *quoting) pop()        { q.stack = q.stack[:len(q.stack)-1] }

// shardRef returns the reference to the shard's variable as one word in
// the current context.
func (q *quoting) shardRef() string {
	switch q.top() {
	case '\'':
		return `'"` + shardRef + `"'` // close the single quotes, expand, reopen
	case '"':
		return shardRef
	default:
		return `"` + shardRef + `"`
	}
}

// step reads the start of rest and returns how many bytes it took (at
// least one), updating the contexts.
func (q *quoting) step(rest string) int {
	c := rest[0]
	if q.top() == '\'' {
		if c == '\'' {
			q.pop()
		}
		return 1
	}
	switch {
	case c == '\\' && len(rest) > 1:
		return 2 // an escaped character (inside double quotes too: \" does not close them)
	case strings.HasPrefix(rest, "$("):
		q.push('(')
		q.parens = append(q.parens, 0)
		return 2
	case c == '`':
		if q.top() == '`' {
			q.pop()
		} else {
			q.push('`')
		}
		return 1
	case c == '"':
		if q.top() == '"' {
			q.pop()
		} else {
			q.push('"')
		}
		return 1
	case q.top() == '"':
		return 1
	case c == '\'':
		q.push('\'')
	case c == '(' && q.top() == '(':
		q.parens[len(q.parens)-1]++
	case c == ')' && q.top() == '(':
		if n := &q.parens[len(q.parens)-1]; *n > 0 {
			*n--
		} else {
			q.pop()
			q.parens = q.parens[:len(q.parens)-1]
		}
	}
	return 1
}

// ShellQuote quotes s for a POSIX shell: s itself when it holds only
// letters, digits and -_.:, else in single quotes. Shard ids are znode
// names and may hold any character but '/', so they are always quoted.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
