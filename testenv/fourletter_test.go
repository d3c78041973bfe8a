package testenv

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestFourLetterWordReadsALongStreamedReply: a reply the server streams
// for longer than fourLetterTimeout in all, as ZooKeeper streams the dump
// and wchc of a million znodes, is read whole (it was cut at 2 s, and the
// 50,000-shard bench's dump failed with an i/o timeout); a server silent
// for longer still fails.
func TestFourLetterWordReadsALongStreamedReply(t *testing.T) {
	chunks := int(fourLetterTimeout/(250*time.Millisecond)) + 4 // 1.5 s longer than the bound
	addr := streamingServer(t, chunks, 250*time.Millisecond)
	reply, err := fourLetterWord(context.Background(), addr, "dump")
	if err != nil || reply != strings.Repeat("x\n", chunks) {
		t.Fatalf("fourLetterWord = %q, %v; want %d lines streamed over %s", reply, err, chunks, time.Duration(chunks)*250*time.Millisecond)
	}
	silent := streamingServer(t, 1, fourLetterTimeout+time.Second)
	if _, err := fourLetterWord(context.Background(), silent, "dump"); err == nil {
		t.Fatal("fourLetterWord of a server silent for longer than fourLetterTimeout succeeded")
	}
}

// streamingServer accepts one connection, reads the command and writes
// chunks lines "x", each after pause, then closes it. The listener is
// closed at the end of the test.
func streamingServer(t *testing.T, chunks int, pause time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done })
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = conn.Read(make([]byte, 4))
		for range chunks {
			time.Sleep(pause)
			if _, err := conn.Write([]byte("x\n")); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String()
}
