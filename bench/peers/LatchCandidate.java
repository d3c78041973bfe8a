// LatchCandidate is one Apache Curator LeaderLatch candidate of zkelect's
// side-by-side benchmark (bench/peers.go), in its own JVM on its own session.
//
// Usage: java LatchCandidate <connect string> <election path> <id> <session timeout ms>
//
// It prints READY once its latch has started and "LEADER <microseconds since
// the Unix epoch>" each time the latch gains leadership (from Curator's
// listener, the moment the library tells its user, stamped then on the
// system clock, so that the benchmark's timing leaves out the pipe). Commands, one per line on stdin:
//
//   resign   close the latch (its znode is deleted) and start a new one,
//            which queues again
//   exit     close the latch and the client, then exit 0
//
// End of input exits as "exit" does.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class LatchCandidate {
    private LatchCandidate() {}

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    private static LeaderLatch start(CuratorFramework client, String path, String id) throws Exception {
        LeaderLatch latch = new LeaderLatch(client, path, id);
        latch.addListener(new LeaderLatchListener() {
            @Override public void isLeader() { say("LEADER " + nowMicros()); }
            @Override public void notLeader() {}
        });
        latch.start();
        return latch;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: LatchCandidate <connect> <path> <id> <session timeout ms>");
            System.exit(2);
        }
        int timeout = Integer.parseInt(args[3]);
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[0])
                .sessionTimeoutMs(timeout)
                .connectionTimeoutMs(timeout)
                .retryPolicy(new ExponentialBackoffRetry(50, 10, 500))
                .build();
        client.start();
        client.blockUntilConnected();
        LeaderLatch latch = start(client, args[1], args[2]);
        say("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            switch (line.trim()) {
                case "resign":
                    latch.close();
                    latch = start(client, args[1], args[2]);
                    break;
                case "exit":
                    latch.close();
                    client.close();
                    System.exit(0);
                    break;
                default:
                    System.err.println("unknown command: " + line);
            }
        }
        latch.close();
        client.close();
        System.exit(0);
    }
}
