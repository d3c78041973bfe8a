package zxidfence_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

func TestTokenParts(t *testing.T) {
	tok := zxidfence.NewToken(1, 5)
	if tok != 0x100000005 {
		t.Fatalf("NewToken(1, 5) = %#x, want 0x100000005", uint64(tok))
	}
	if tok.Epoch() != 1 || tok.Counter() != 5 {
		t.Fatalf("Epoch, Counter = %d, %d; want 1, 5", tok.Epoch(), tok.Counter())
	}
	for _, c := range []struct{ got, want string }{
		{tok.String(), "0x100000005 (1:5)"},
		{tok.Hex(), "0x100000005"},
		{tok.EpochCounter(), "1:5"},
		{tok.Decimal(), "4294967301"},
		{zxidfence.NoToken.String(), "0x0 (0:0)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestParseTokenAcceptsEveryPrintedForm(t *testing.T) {
	max := zxidfence.NewToken(^uint32(0), ^uint32(0))
	tests := []struct {
		in   string
		want zxidfence.Token
	}{
		{"4294967301", 0x100000005},
		{"0x100000005", 0x100000005},
		{"0X100000005", 0x100000005},
		{"1:5", 0x100000005},
		{" 1:5 ", 0x100000005},
		{"0x100000005 (1:5)", 0x100000005},
		{"0", zxidfence.NoToken},
		{"18446744073709551615", max},
		{"4294967295:4294967295", max},
	}
	for _, tt := range tests {
		got, err := zxidfence.ParseToken(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseToken(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTokenRejectsMalformed(t *testing.T) {
	for _, in := range []string{
		"", "-1", "+1", "abc", "0x", "0xg", "1:", ":5", "1:5:6", "4294967296:0", "0:4294967296",
		"18446744073709551616", "1_000", "0x100000005 (1:6)", "0x100000005 (1:5", "100000005 (1:5)",
		"0x100000005 (15)", "1.5",
	} {
		if tok, err := zxidfence.ParseToken(in); !errors.Is(err, zxidfence.ErrInvalidToken) {
			t.Errorf("ParseToken(%q) = %v, %v; want ErrInvalidToken", in, tok, err)
		}
	}
}

func TestTokenRoundTrips(t *testing.T) {
	for _, tok := range []zxidfence.Token{0, 1, 0x100000005, 0x7fffffffffffffff, ^zxidfence.Token(0)} {
		for _, s := range []string{tok.String(), tok.Hex(), tok.EpochCounter(), tok.Decimal()} {
			if got, err := zxidfence.ParseToken(s); err != nil || got != tok {
				t.Errorf("ParseToken(%q) = %v, %v; want %v", s, got, err, tok)
			}
		}
		bin, err := tok.MarshalBinary()
		if err != nil || len(bin) != zxidfence.BinarySize {
			t.Fatalf("MarshalBinary(%v) = %x, %v", tok, bin, err)
		}
		var back zxidfence.Token
		if err := back.UnmarshalBinary(bin); err != nil || back != tok {
			t.Errorf("binary round trip of %v = %v, %v", tok, back, err)
		}
		js, err := json.Marshal(tok)
		if err != nil || string(js) != `"`+tok.Decimal()+`"` {
			t.Errorf("json.Marshal(%v) = %s, %v", tok, js, err)
		}
		if err := json.Unmarshal(js, &back); err != nil || back != tok {
			t.Errorf("JSON round trip of %v = %v, %v", tok, back, err)
		}
	}
}

func TestTokenBinaryIsBigEndian(t *testing.T) {
	b, _ := zxidfence.NewToken(1, 5).AppendBinary([]byte{0xff})
	want := []byte{0xff, 0, 0, 0, 1, 0, 0, 0, 5}
	if string(b) != string(want) {
		t.Fatalf("AppendBinary = %x, want %x", b, want)
	}
	var tok zxidfence.Token
	for _, n := range []int{0, 7, 9} {
		if err := tok.UnmarshalBinary(make([]byte, n)); !errors.Is(err, zxidfence.ErrInvalidToken) {
			t.Errorf("UnmarshalBinary(%d bytes) = %v; want ErrInvalidToken", n, err)
		}
	}
}

func TestTokenCompareAndFromZxid(t *testing.T) {
	a, b := zxidfence.NewToken(1, 9), zxidfence.NewToken(2, 0)
	if a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 {
		t.Fatal("a later epoch must compare higher than any counter of an earlier one")
	}
	if tok, err := zxidfence.FromZxid(0x200000001); err != nil || tok != 0x200000001 {
		t.Fatalf("FromZxid = %v, %v", tok, err)
	}
	if _, err := zxidfence.FromZxid(-1); !errors.Is(err, zxidfence.ErrInvalidToken) {
		t.Fatalf("FromZxid(-1) = %v; want ErrInvalidToken", err)
	}
}
