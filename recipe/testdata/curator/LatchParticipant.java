// LatchParticipant is one Apache Curator LeaderLatch participant, driven by
// zkelect's interop test (recipe/interop_test.go).
//
// Usage: java LatchParticipant <connect string> <election path> <id> <control file>
//
// It reads commands, one per line, from the control file (a FIFO the test
// writes to) and answers on stdout:
//
//   state N   ->  STATE N <true|false> <our znode path or ->
//   await N   ->  AWAIT N <true|false>   (waits up to 30s for leadership)
//   close N   ->  CLOSED N               (LeaderLatch.close, then exits 0)
//
// End of input closes the latch and exits too. Leadership changes are also
// printed as they happen (LEADER / NOTLEADER), for the test's log.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class LatchParticipant {
    private LatchParticipant() {}

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: LatchParticipant <connect> <path> <id> <control file>");
            System.exit(2);
        }
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[0])
                .sessionTimeoutMs(4000)
                .connectionTimeoutMs(4000)
                .retryPolicy(new ExponentialBackoffRetry(50, 10, 500))
                .build();
        client.start();
        LeaderLatch latch = new LeaderLatch(client, args[1], args[2]);
        latch.addListener(new LeaderLatchListener() {
            @Override public void isLeader() { say("LEADER"); }
            @Override public void notLeader() { say("NOTLEADER"); }
        });
        latch.start();
        say("READY");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                new FileInputStream(args[3]), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] cmd = line.trim().split("\\s+");
                if (cmd.length != 2) {
                    say("ERROR bad command: " + line);
                    continue;
                }
                switch (cmd[0]) {
                    case "state":
                        String path = latch.getOurPath();
                        say("STATE " + cmd[1] + " " + latch.hasLeadership() + " " + (path == null ? "-" : path));
                        break;
                    case "await":
                        say("AWAIT " + cmd[1] + " " + latch.await(30, TimeUnit.SECONDS));
                        break;
                    case "close":
                        latch.close();
                        say("CLOSED " + cmd[1]);
                        client.close();
                        return;
                    default:
                        say("ERROR unknown command: " + line);
                }
            }
        }
        latch.close();
        client.close();
    }
}
