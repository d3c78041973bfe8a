package testenv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS is a tiny authoritative DNS server on a loopback address, port 53
// (the only port a resolv.conf nameserver may use), for tests of name
// resolution against a slow resolver: it answers A queries for the names
// it holds, after a delay, and every other query with no answer. Use it
// with Hosts.UseNameserver, inside WithPrivateHosts. Methods are safe for
// concurrent use; Close stops it.
type DNS struct {
	conn      *net.UDPConn
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup

	mu      sync.Mutex
	names   map[string][]net.IP // lower case, with the final dot
	delay   time.Duration
	queries int
}

// StartDNS starts a DNS server on a free address of 127.0.0.0/8 (port
// 53, which needs root). The caller must Close it.
func StartDNS() (*DNS, error) {
	var errs []error
	for range 20 {
		ip := net.IPv4(127, 53, byte(rand.IntN(250)+1), byte(rand.IntN(250)+1))
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: 53})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d := &DNS{conn: c, done: make(chan struct{}), names: map[string][]net.IP{}}
		d.wg.Go(d.serve)
		return d, nil
	}
	return nil, fmt.Errorf("testenv: DNS server: no free loopback address on port 53: %w", errors.Join(errs...))
}

// IP returns the address the server listens on (port 53).
func (d *DNS) IP() string { return d.conn.LocalAddr().(*net.UDPAddr).IP.String() }

// Set makes name resolve to addrs (IPv4 literals; anything else is
// skipped: the server answers A queries only).
func (d *DNS) Set(name string, addrs ...string) {
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if ip := net.ParseIP(a).To4(); ip != nil {
			ips = append(ips, ip)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.names[canonical(name)] = ips
}

// SetDelay makes every later answer wait d.
func (d *DNS) SetDelay(delay time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.delay = delay
}

// Queries returns how many queries the server received.
func (d *DNS) Queries() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries
}

// Close stops the server and waits for its answers in flight to be
// dropped.
func (d *DNS) Close() error {
	d.closeOnce.Do(func() {
		close(d.done)
		d.closeErr = d.conn.Close()
		d.wg.Wait()
	})
	return d.closeErr
}

func canonical(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) + "." }

// serve reads queries until Close, answering each on its own goroutine.
func (d *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		var q dnsmessage.Message
		if q.Unpack(buf[:n]) != nil || len(q.Questions) == 0 {
			continue
		}
		d.mu.Lock()
		d.queries++
		delay := d.delay
		d.mu.Unlock()
		d.wg.Go(func() { d.answer(q, from, delay) })
	}
}

// answer sends q's answer to from after delay.
func (d *DNS) answer(q dnsmessage.Message, from *net.UDPAddr, delay time.Duration) {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.done:
		return
	}
	question := q.Questions[0]
	reply := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: q.Header.ID, Response: true, Authoritative: true, RecursionDesired: q.Header.RecursionDesired},
		Questions: q.Questions,
	}
	d.mu.Lock()
	ips, known := d.names[strings.ToLower(question.Name.String())]
	d.mu.Unlock()
	if !known {
		reply.Header.RCode = dnsmessage.RCodeNameError
	}
	if question.Type == dnsmessage.TypeA {
		for _, ip := range ips {
			reply.Answers = append(reply.Answers, dnsmessage.Resource{
				Header: dnsmessage.ResourceHeader{Name: question.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 1},
				Body:   &dnsmessage.AResource{A: [4]byte(ip)},
			})
		}
	}
	b, err := reply.Pack()
	if err != nil {
		return
	}
	_, _ = d.conn.WriteToUDP(b, from)
}
