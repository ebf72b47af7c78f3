// MoveOps checks, with Apache ZooKeeper's own Java client (3.9.3), that a
// session moves to another member of an ensemble with its watches: the
// client re-registers them there (SetWatches2, with the last zxid it saw)
// and the member sends the events it missed. It writes a transcript that
// the test (tests/ensemble/java_test.go) compares with ZooKeeper's,
// kept in MoveOps.golden.
//
// Usage: java -cp DIR:ZK_CLASSPATH MoveOps HOST:PORT,HOST:PORT TRANSCRIPT
//
// With the test, over stdin and stdout: the client sets its watches and
// prints "SERVER <port>" (the member it is on); the test freezes that
// member, changes the watched nodes through another, kills the frozen
// member (so the client's connection breaks at once, without a timeout)
// and prints "GO"; the client then waits to be connected again and
// reports the events it got. Catch-up events come in the order the
// client listed the paths, which is a hash order, so they are sorted.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public class MoveOps extends Transcript {
    static final long WAIT_SECONDS = 90;
    static final Events events = new Events(WAIT_SECONDS);

    static Watcher w(String label) {
        return events.watcher(label);
    }

    static List<String> drain(ZooKeeper zk) throws Exception {
        return events.drain(zk);
    }

    static String show(List<String> l) {
        return l.isEmpty() ? "none" : String.join(", ", l);
    }

    /** The port of the member the client is connected to. */
    static int port(ZooKeeper zk) {
        Matcher m = Pattern.compile("remoteserver:\\S*:(\\d+)").matcher(zk.toString());
        if (!m.find()) {
            throw new IllegalStateException("no remote server in " + zk);
        }
        return Integer.parseInt(m.group(1));
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: MoveOps HOST:PORT,... TRANSCRIPT");
            System.exit(2);
        }
        open(args[1]);
        CountDownLatch up = new CountDownLatch(1);
        CountDownLatch lost = new CountDownLatch(1);
        CountDownLatch back = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(args[0], 20000, e -> {
            switch (e.getState()) {
                case SyncConnected:
                    if (lost.getCount() == 0) {
                        back.countDown();
                    }
                    up.countDown();
                    break;
                case Disconnected:
                    lost.countDown();
                    break;
                default:
                    events.add("state " + e.getState());
            }
        });
        if (!up.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no session");
        }
        long sid = zk.getSessionId();
        for (String path : new String[] {"/mv", "/mv/d", "/mv/p", "/mv/r"}) {
            zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
        zk.getData("/mv/d", w("data"), null);
        zk.getChildren("/mv", w("children"));
        p("exists /mv/new: " + zk.exists("/mv/new", w("exists")));
        zk.addWatch("/mv/p", w("persistent"), AddWatchMode.PERSISTENT);
        zk.addWatch("/mv/r", w("recursive"), AddWatchMode.PERSISTENT_RECURSIVE);
        p("events before the move: " + show(drain(zk)));
        // The ensemble's configuration as the client reads it (reconfig
        // disabled), ports masked: they differ from run to run.
        org.apache.zookeeper.data.Stat cs = new org.apache.zookeeper.data.Stat();
        byte[] config = zk.getConfig(false, cs);
        p("config stat: v=" + cs.getVersion() + " av=" + cs.getAversion() + " cv=" + cs.getCversion() + " mzxid=" + Long.toHexString(cs.getMzxid())
            + " czxid=" + Long.toHexString(cs.getCzxid()) + " pzxid=" + Long.toHexString(cs.getPzxid()) + " ctime0=" + (cs.getCtime() == 0) + " mtime0=" + (cs.getMtime() == 0) + " len=" + cs.getDataLength());
        p("config: " + new String(config, StandardCharsets.UTF_8).replaceAll(":\\d+", ":P").replace("\n", " | "));
        int first = port(zk);
        System.out.println("SERVER " + first);
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = in.readLine();
        if (!"GO".equals(line)) {
            throw new IllegalStateException("expected GO, got " + line);
        }
        if (!lost.await(WAIT_SECONDS, TimeUnit.SECONDS) || !back.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the client did not move: " + zk);
        }
        p("same session after the move: " + (zk.getSessionId() == sid));
        p("on another member: " + (port(zk) != first));
        List<String> caught = drain(zk);
        Collections.sort(caught);
        p("events caught up on the new member: " + show(caught));

        zk.setData("/mv/p", new byte[] {1}, -1);
        zk.create("/mv/r/y", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.setData("/mv/d", new byte[] {2}, -1);
        zk.delete("/mv/new", -1);
        p("events after the move: " + show(drain(zk)));
        zk.close();
        p("done");
        close();
    }
}
