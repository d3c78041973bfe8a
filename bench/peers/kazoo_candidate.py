"""One kazoo Election candidate of zkelect's side-by-side benchmark
(bench/peers.go), in its own interpreter on its own session.

Usage: python3 kazoo_candidate.py <connect string> <election path> <id> <session timeout ms>

It prints READY once its client is connected and its election runs, and
"LEADER <microseconds since the Unix epoch>" each time Election.run calls
its function (the moment the library tells its user, stamped then on the
system clock, so that the benchmark's timing leaves out the pipe). Commands, one per line on stdin:

  resign   return from the leader function (kazoo releases the lock,
           deleting its znode) and run the election again, queueing anew
  exit     stop the client (its session is closed), then exit 0

End of input exits as "exit" does.
"""
import os
import queue
import sys
import threading
import time

from kazoo.client import KazooClient


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) != 5:
        sys.stderr.write("usage: kazoo_candidate.py <connect> <path> <id> <session timeout ms>\n")
        return 2
    hosts, path, ident, timeout_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = KazooClient(hosts=hosts, timeout=timeout_ms / 1000.0)
    client.start(timeout=30)
    election = client.Election(path, ident)
    resigns = queue.Queue()

    def lead():
        say("LEADER %d" % (time.time_ns() // 1000))
        resigns.get()

    def campaign():
        while True:
            election.run(lead)

    threading.Thread(target=campaign, daemon=True).start()
    say("READY")
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "resign":
            resigns.put(True)
        elif cmd == "exit":
            break
        else:
            sys.stderr.write("unknown command: %s\n" % cmd)
    client.stop()
    client.close()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
