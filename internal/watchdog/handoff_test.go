package watchdog_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/zkelect/zkelect/internal/watchdog"
)

// TestBookFollowsHandoff: sessions handed over are kept, closed ones are
// forgotten, and a bye stops the reading with nothing left to close.
func TestBookFollowsHandoff(t *testing.T) {
	var pipe bytes.Buffer
	h := watchdog.NewHandoff(&pipe)
	a := watchdog.Credentials{ID: -0x7fedcba987654321, Password: []byte{1, 2, 3}, Servers: []string{"a:1", "b:2"}}
	b := watchdog.Credentials{ID: 0x42, Password: make([]byte, 16), Servers: []string{"c:3"}}
	for _, err := range []error{h.Session(a), h.Session(b), h.Closed(b.ID)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	book := watchdog.NewBook()
	if err := book.Read(bytes.NewReader(pipe.Bytes())); err != nil {
		t.Fatal(err)
	}
	got := book.Sessions()
	if len(got) != 1 || got[0].ID != a.ID || !bytes.Equal(got[0].Password, a.Password) || strings.Join(got[0].Servers, ",") != "a:1,b:2" {
		t.Fatalf("sessions %+v, want only %+v", got, a)
	}
	if book.Bye() {
		t.Fatal("bye before one was sent")
	}
	if err := h.Bye(); err != nil {
		t.Fatal(err)
	}
	pipe.WriteString("session 1 00 x:1\n") // after the bye: not read
	rest := bytes.NewReader(pipe.Bytes()[len(pipe.Bytes())-len("bye\nsession 1 00 x:1\n"):])
	if err := book.Read(rest); err != nil || !book.Bye() || len(book.Sessions()) != 1 {
		t.Fatalf("after bye: err %v, bye %v, sessions %v", err, book.Bye(), book.Sessions())
	}
}

// TestBookRefusesBadLines: a line Book cannot parse is an error naming it.
func TestBookRefusesBadLines(t *testing.T) {
	for _, l := range []string{"session zz 00 a:1", "session 1 xyz a:1", "closed", "hello"} {
		err := watchdog.NewBook().Read(strings.NewReader(l + "\n"))
		if !errors.Is(err, watchdog.ErrBadHandoff) || !strings.Contains(err.Error(), l) {
			t.Errorf("Read(%q) = %v, want ErrBadHandoff naming the line", l, err)
		}
	}
}
