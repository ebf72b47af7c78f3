// Events collects the watch events of a session's watchers on one queue,
// in the order the client delivers them, and tells when every event
// caused before a point has arrived (drain), without waiting on time.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

final class Events {
    private static final String MARK = "\u0000drained";
    private final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
    private final long waitSeconds;

    Events(long waitSeconds) {
        this.waitSeconds = waitSeconds;
    }

    /** A watcher that queues its node events as "label Type path". */
    Watcher watcher(String label) {
        return e -> {
            if (e.getType() != Watcher.Event.EventType.None) {
                queue.add(label + " " + e.getType() + " " + e.getPath());
            }
        };
    }

    /** Queues a line of the caller's (a state change, say). */
    void add(String line) {
        queue.add(line);
    }

    /**
     * Returns every event queued before a sync round trip, in order. The
     * client delivers watch events and callbacks on one thread in the
     * order the server sent them, and the server sends an event before
     * the reply to any later request of the session, so when the sync's
     * callback runs every event the earlier operations caused is queued.
     */
    List<String> drain(ZooKeeper zk) throws InterruptedException {
        zk.sync("/", (rc, path, ctx) -> queue.add(MARK), null);
        List<String> got = new ArrayList<>();
        while (true) {
            String e = queue.poll(waitSeconds, TimeUnit.SECONDS);
            if (e == null) {
                throw new IllegalStateException("sync callback never came");
            }
            if (e.equals(MARK)) {
                return got;
            }
            got.add(e);
        }
    }
}
