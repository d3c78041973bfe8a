package cli

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBadInputExitsWithOneLine checks that every kind of bad input ends the
// process quickly with a non-zero status and one line on stderr naming the
// fix: never a usage dump, a stack trace or a hang.
func TestBadInputExitsWithOneLine(t *testing.T) {
	zk := "--zk=" + zkc.ConnectString()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no ensemble", []string{"run", "--election", "/e", "--", "true"}, 1, "pass --zk host:port[,host:port] or set ZKELECT_ZK"},
		{"malformed zk", []string{"status", "--zk", "localhost", "--election", "/e"}, 1, `invalid --zk entry "localhost"`},
		{"chroot suffix", []string{"status", "--zk", "127.0.0.1:2181,127.0.0.1:2182/apps", "--election", "/e"}, 1, `a chroot suffix (/apps) is not supported; drop it and put it in front of --election or --root`},
		{"unreachable", []string{"status", "--zk", "127.0.0.1:1", "--connect-timeout", "1s", "--election", "/e"}, 1, "cannot reach ZooKeeper at 127.0.0.1:1 within 1s"},
		{"unroutable", []string{"status", "--zk", "192.0.2.1:2181", "--connect-timeout", "2s", "--election", "/e"}, 1, "cannot reach ZooKeeper at 192.0.2.1:2181 within 2s"},
		{"relative path", []string{"run", zk, "--election", "apps/job", "--", "true"}, 1, "a ZooKeeper path starts with /"},
		{"trailing slash", []string{"status", zk, "--election", "/apps/job/"}, 1, "does not end with /"},
		{"emoji in path", []string{"run", zk, "--election", "/apps/\U0001F600", "--", "true"}, 1, "ZooKeeper refuses the character U+1F600"},
		{"control char in path", []string{"status", zk, "--election", "/apps/a\x01b"}, 1, "ZooKeeper refuses the character U+0001"},
		{"C1 control in root", []string{"status", zk, "--root", "/apps/a\u0085b"}, 1, "ZooKeeper refuses the character U+0085"},
		{"not UTF-8 root", []string{"shards", zk, "--root", "/apps/\xff", "--member", "m", "--shards", "2"}, 1, "not valid UTF-8"},
		{"emoji shard", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "a,\U0001F600"}, 1, "forbidden character U+1F600"},
		{"huge session timeout", []string{"run", zk, "--session-timeout", "1000h", "--election", "/e", "--", "true"}, 1, "invalid --session-timeout 1000h0m0s"},
		{"zero handoff timeout", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--handoff-timeout", "0"}, 1, "invalid --handoff-timeout 0s"},
		{"zero max handoffs", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--max-handoffs", "0"}, 1, "invalid --max-handoffs 0"},
		{"negative shards per session", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--max-shards-per-session", "-1"}, 1, "invalid --max-shards-per-session -1"},
		{"negative grace", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--grace", "-1s"}, 1, "invalid --grace -1s"},
		{"no command", []string{"run", zk, "--election", "/e"}, 1, "missing command: give it after --"},
		{"empty command", []string{"run", zk, "--election", "/e", "--"}, 1, "missing command"},
		{"command not found", []string{"run", zk, "--election", "/e", "--", "no-such-command-zkelect"}, 127, `command "no-such-command-zkelect" not found`},
		{"no target", []string{"status", zk}, 1, "pass --election PATH or --root ROOT"},
		{"both targets", []string{"watch", zk, "--election", "/a", "--root", "/b"}, 1, "not both"},
		{"bad output", []string{"status", zk, "--election", "/a", "-o", "yaml"}, 1, `invalid --output "yaml"`},
		{"status of a root without shards", []string{"status", zk, "--root", "/no/such/root"}, 2, "partition root /no/such/root has no shards"},
		{"no shards", []string{"shards", zk, "--root", "/r", "--member", "m"}, 1, "missing --shards"},
		{"bad shard id", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "a,..,b"}, 1, `invalid --shards entry ".."`},
		{"zero shards", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "0"}, 1, "want a count in 1..100000"},
		{"count in e notation", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "1e3"}, 1, `invalid --shards "1e3": a count is a plain decimal integer`},
		{"count in hex", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "0x10"}, 1, `invalid --shards "0x10"`},
		{"id too long", []string{"run", zk, "--election", "/e", "--id", strings.Repeat("i", 1025), "--", "true"}, 1, "invalid --id: 1025 bytes, at most 1024"},
		{"root of ZooKeeper", []string{"status", zk, "--root", "/"}, 1, `invalid --root "/": ZooKeeper's root znode cannot be used; pick a path below it (e.g. /apps/billing)`},
		{"no root", []string{"shards", zk, "--member", "m", "--shards", "2"}, 1, "missing --root: pass a ZooKeeper path such as /apps/billing"},
		{"unknown auth scheme", []string{"run", zk, "--zk-auth", "kerberos", "--election", "/e", "--", "true"}, 1, `invalid --zk-auth "kerberos": use digest`},
		{"auth without credentials", []string{"run", zk, "--zk-auth", "digest", "--election", "/e", "--", "true"}, 1, "--zk-auth digest needs credentials"},
		{"missing auth file", []string{"status", zk, "--zk-auth", "digest", "--zk-auth-file", "/no/such/file", "--election", "/e"}, 1, "read --zk-auth-file"},
		{"auth file without auth", []string{"status", zk, "--zk-auth-file", "/no/such/file", "--election", "/e"}, 1, "--zk-auth-file given without --zk-auth"},
		{"group ACL without auth", []string{"run", zk, "--acl", "group", "--election", "/e", "--", "true"}, 1, "no --zk-auth is given"},
		{"ACL entry without perms", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--acl", "world:anyone"}, 1, `invalid --acl entry "world:anyone"`},
		{"ACL with a bad permission", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--acl", "world:anyone:rx"}, 1, `permission 'x' is not one of c, d, r, w, a`},
		{"HTTPS certificate without key", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--listen-tls-cert", "/no/cert"}, 1, "--listen-tls-cert and --listen-tls-key go together"},
		{"unreadable HTTPS certificate", []string{"shards", zk, "--root", "/r", "--member", "m", "--shards", "2", "--listen-tls-cert", "/no/cert", "--listen-tls-key", "/no/key"}, 1, "load --listen-tls-cert /no/cert"},
		{"TLS without a CA", []string{"status", zk, "--zk-tls-server-name", "zk1", "--election", "/e"}, 1, "TLS to ZooKeeper needs --zk-tls-ca"},
		{"unreadable CA", []string{"status", zk, "--zk-tls-ca", "/no/ca.pem", "--election", "/e"}, 1, "read --zk-tls-ca"},
		{"client certificate without key", []string{"status", zk, "--zk-tls-ca", "/dev/null", "--zk-tls-cert", "/no/c", "--election", "/e"}, 1, "holds no PEM certificate"},
		{"bad log level", []string{"status", zk, "--election", "/a", "--log-level", "loud"}, 1, `invalid --log-level "loud"`},
		{"unknown flag", []string{"run", "--frobnicate"}, 1, "unknown flag: --frobnicate"},
		{"unknown command", []string{"frobnicate"}, 1, `unknown command "frobnicate"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			p := startProc(t, tc.name, tc.args)
			code := p.wait(10 * time.Second)
			elapsed := time.Since(start)
			stderr := p.err.String()
			if code != tc.code {
				t.Errorf("exit status %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "zkelect: ") {
				t.Errorf("stderr is not one line starting with \"zkelect: \":\n%s", stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace on stderr:\n%s", stderr)
			}
			if p.out.String() != "" {
				t.Errorf("unexpected stdout: %q", p.out.String())
			}
			// A case given --connect-timeout waits it out, maybe go-zookeeper's 1s
			// close wait, and 3s more on a loaded machine; the others fail well
			// before the default connect timeout (5s).
			bound := defaultConnectTimeout
			if i := slices.Index(tc.args, "--connect-timeout"); i >= 0 {
				d, err := time.ParseDuration(tc.args[i+1])
				if err != nil {
					t.Fatal(err)
				}
				bound = d + time.Second + 3*time.Second
			}
			if elapsed > bound {
				t.Errorf("took %s to fail; want well within the connect timeout (bound %s)", elapsed, bound)
			}
		})
	}
}

// TestHelpHasExamples checks every command's --help shows an example.
func TestHelpHasExamples(t *testing.T) {
	for _, c := range [][]string{{"run"}, {"shards"}, {"status"}, {"watch"}, {"version"}, {"demo"}} {
		p := startProc(t, c[0]+" --help", append(c, "--help"))
		if code := p.wait(10 * time.Second); code != 0 {
			t.Errorf("%s --help: exit %d", c[0], code)
		}
		if !strings.Contains(p.out.String(), "Examples:") {
			t.Errorf("%s --help has no example:\n%s", c[0], p.out.String())
		}
	}
}

// TestHelpShowsNoMachineDefaults: a flag whose default comes from the
// environment, the host name or the pid says so once; --help once added
// (default "vm") after "(default $ZKELECT_MEMBER or the host name)".
func TestHelpShowsNoMachineDefaults(t *testing.T) {
	for _, c := range []struct{ cmd, flag string }{{"shards", "--member"}, {"shards", "--zk"}, {"run", "--id"}, {"status", "--zk"}} {
		p := startProc(t, c.cmd+" --help", []string{c.cmd, "--help"}, envZK+"=127.0.0.1:2181")
		if code := p.wait(10 * time.Second); code != 0 {
			t.Fatalf("%s --help: exit %d", c.cmd, code)
		}
		for line := range strings.Lines(p.out.String()) {
			if strings.Contains(line, c.flag+" string ") && strings.Count(line, "(default") != 1 {
				t.Errorf("%s --help: %q; want one default, stated as its source", c.cmd, strings.TrimSpace(line))
			}
		}
	}
}

func TestVersion(t *testing.T) {
	p := startProc(t, "version", []string{"version"})
	if code := p.wait(10 * time.Second); code != 0 {
		t.Fatalf("version: exit %d", code)
	}
	if out := p.out.String(); !strings.HasPrefix(out, "zkelect ") || !strings.Contains(out, "go1.") {
		t.Errorf("version output %q", out)
	}
}

// TestNotZooKeeperServerIsNamed: --zk pointing at an HTTP server says that
// address is not a ZooKeeper server, alone or beside a closed port.
func TestNotZooKeeperServerIsNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // answers whatever it is sent as an HTTP server does a malformed request
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := c.Read(make([]byte, 1024)); err == nil {
					_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
				}
			}()
		}
	}()
	addr := ln.Addr().String()
	want := addr + " is not a ZooKeeper server (it answered with another protocol)"
	for _, zk := range []string{addr, addr + ",127.0.0.1:1"} {
		p := startProc(t, "status", []string{"status", "--zk", zk, "--connect-timeout", "2s", "--election", "/e"})
		if code := p.wait(20 * time.Second); code != 1 || !strings.Contains(p.err.String(), want) {
			t.Errorf("--zk %s: exit %d, stderr %q; want 1 and %q", zk, code, p.err.String(), want)
		}
	}
}

// TestGraceHelpShowsOneDefault: --grace's help states its default once (a
// third of the session timeout, at most 3s); it once added "(default 3s)".
func TestGraceHelpShowsOneDefault(t *testing.T) {
	for _, c := range []string{"run", "shards"} {
		p := startProc(t, c+" --help", []string{c, "--help"})
		if code := p.wait(10 * time.Second); code != 0 {
			t.Fatalf("%s --help: exit %d", c, code)
		}
		for line := range strings.Lines(p.out.String()) {
			if strings.Contains(line, "--grace duration") && strings.Count(line, "default") != 1 {
				t.Errorf("%s --help: %q; want one default", c, strings.TrimSpace(line))
			}
		}
	}
}
