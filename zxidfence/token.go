package zxidfence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Token is a fencing token: a ZooKeeper zxid, the 64-bit transaction id that
// ZooKeeper assigns to every change. The high 32 bits are the epoch (bumped
// each time the ensemble elects a new quorum leader) and the low 32 bits the
// counter within that epoch, so numeric order is the order in which
// ZooKeeper committed the changes.
//
// A leader's token is the czxid of its election znode: every later leader of
// the same election holds a strictly larger one. The zero Token means "no
// token" and is never accepted by a guard.
type Token uint64

// NoToken is the zero Token: no token at all. Guards reject it with
// ErrNoToken.
const NoToken Token = 0

// BinarySize is the length in bytes of a Token's binary encoding (8 bytes,
// big-endian).
const BinarySize = 8

// Errors returned when decoding a Token.
var (
	// ErrInvalidToken reports a token string or byte slice that does not
	// decode to a Token.
	ErrInvalidToken = errors.New("zxidfence: invalid token")
)

// NewToken returns the Token with the given epoch (high 32 bits) and counter
// (low 32 bits).
func NewToken(epoch, counter uint32) Token {
	return Token(uint64(epoch)<<32 | uint64(counter))
}

// FromZxid converts a zxid as go-zookeeper reports it (zk.Stat.Czxid, an
// int64) to a Token. A negative zxid cannot come from ZooKeeper; it yields
// an error wrapping ErrInvalidToken.
func FromZxid(zxid int64) (Token, error) {
	if zxid < 0 {
		return NoToken, fmt.Errorf("%w: negative zxid %d", ErrInvalidToken, zxid)
	}
	return Token(zxid), nil
}

// Epoch returns the ZooKeeper epoch: the high 32 bits.
func (t Token) Epoch() uint32 { return uint32(t >> 32) }

// Counter returns the transaction counter within the epoch: the low 32 bits.
func (t Token) Counter() uint32 { return uint32(t) }

// IsZero reports whether t is NoToken.
func (t Token) IsZero() bool { return t == NoToken }

// Compare returns -1 if t < u, 0 if t == u and +1 if t > u.
func (t Token) Compare(u Token) int {
	switch {
	case t < u:
		return -1
	case t > u:
		return 1
	}
	return 0
}

// String returns the canonical human form, the hex zxid followed by
// epoch:counter, e.g. "0x100000005 (1:5)". It is meant for logs and error
// messages; ParseToken accepts it back. Use Decimal for transport.
func (t Token) String() string {
	return t.Hex() + " (" + t.EpochCounter() + ")"
}

// Hex returns the zxid in hexadecimal with a 0x prefix, as ZooKeeper's own
// logs and four-letter words print it, e.g. "0x100000005".
func (t Token) Hex() string { return "0x" + strconv.FormatUint(uint64(t), 16) }

// EpochCounter returns "epoch:counter" in decimal, e.g. "1:5".
func (t Token) EpochCounter() string {
	return strconv.FormatUint(uint64(t.Epoch()), 10) + ":" + strconv.FormatUint(uint64(t.Counter()), 10)
}

// Decimal returns the zxid as an unsigned decimal string, e.g. "4294967301":
// the form used in HTTP headers, environment variables and MarshalText.
func (t Token) Decimal() string { return strconv.FormatUint(uint64(t), 10) }

// ParseToken parses a Token from any of the forms this package prints: an
// unsigned decimal ("4294967301"), a 0x-prefixed hexadecimal zxid
// ("0x100000005"), "epoch:counter" ("1:5"), or String's form
// ("0x100000005 (1:5)", whose two halves must agree). Surrounding spaces are
// ignored. Zero parses to NoToken without error; guards reject it. Any other
// input returns an error wrapping ErrInvalidToken.
func ParseToken(s string) (Token, error) {
	s = strings.TrimSpace(s)
	if hex, ec, ok := strings.Cut(s, " ("); ok {
		return parseCanonical(s, hex, ec)
	}
	if ep, ctr, ok := strings.Cut(s, ":"); ok {
		return parseEpochCounter(s, ep, ctr)
	}
	if rest, ok := cutHexPrefix(s); ok {
		return parseUint(s, rest, 16)
	}
	return parseUint(s, s, 10)
}

func parseCanonical(s, hex, ec string) (Token, error) {
	ec, ok := strings.CutSuffix(ec, ")")
	if !ok {
		return NoToken, invalid(s, "missing closing parenthesis")
	}
	digits, ok := cutHexPrefix(hex)
	if !ok {
		return NoToken, invalid(s, "expected 0x before the parenthesis")
	}
	h, err := parseUint(s, digits, 16)
	if err != nil {
		return NoToken, err
	}
	ep, ctr, ok := strings.Cut(ec, ":")
	if !ok {
		return NoToken, invalid(s, "expected epoch:counter in parentheses")
	}
	e, err := parseEpochCounter(s, ep, ctr)
	if err != nil {
		return NoToken, err
	}
	if h != e {
		return NoToken, invalid(s, "hex zxid and epoch:counter disagree")
	}
	return h, nil
}

func parseEpochCounter(s, ep, ctr string) (Token, error) {
	e, err := strconv.ParseUint(ep, 10, 32)
	if err != nil {
		return NoToken, invalid(s, "epoch is not a 32-bit unsigned decimal")
	}
	c, err := strconv.ParseUint(ctr, 10, 32)
	if err != nil {
		return NoToken, invalid(s, "counter is not a 32-bit unsigned decimal")
	}
	return NewToken(uint32(e), uint32(c)), nil
}

func parseUint(s, digits string, base int) (Token, error) {
	// ParseUint accepts underscores only with base 0; a sign is rejected.
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return NoToken, invalid(s, "not a 64-bit unsigned number")
	}
	return Token(v), nil
}

func cutHexPrefix(s string) (string, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

func invalid(s, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidToken, s, why)
}

// AppendText appends the Decimal form to b. It implements
// encoding.TextAppender and never fails.
func (t Token) AppendText(b []byte) ([]byte, error) {
	return strconv.AppendUint(b, uint64(t), 10), nil
}

// MarshalText returns the Decimal form. It implements encoding.TextMarshaler
// (so a Token is a JSON string) and never fails.
func (t Token) MarshalText() ([]byte, error) { return t.AppendText(nil) }

// UnmarshalText parses any form ParseToken accepts. It implements
// encoding.TextUnmarshaler; errors wrap ErrInvalidToken.
func (t *Token) UnmarshalText(text []byte) error {
	v, err := ParseToken(string(text))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// AppendBinary appends the 8-byte big-endian encoding to b. It implements
// encoding.BinaryAppender and never fails.
func (t Token) AppendBinary(b []byte) ([]byte, error) {
	return binary.BigEndian.AppendUint64(b, uint64(t)), nil
}

// MarshalBinary returns the 8-byte big-endian encoding. It implements
// encoding.BinaryMarshaler and never fails.
func (t Token) MarshalBinary() ([]byte, error) { return t.AppendBinary(make([]byte, 0, BinarySize)) }

// UnmarshalBinary decodes exactly 8 big-endian bytes. It implements
// encoding.BinaryUnmarshaler; any other length returns an error wrapping
// ErrInvalidToken.
func (t *Token) UnmarshalBinary(data []byte) error {
	if len(data) != BinarySize {
		return fmt.Errorf("%w: binary token must be %d bytes, got %d", ErrInvalidToken, BinarySize, len(data))
	}
	*t = Token(binary.BigEndian.Uint64(data))
	return nil
}
