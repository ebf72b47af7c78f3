// ClientOps drives a ZooKeeper server with Apache ZooKeeper's own Java
// client (3.9.3) and writes a transcript of what it saw: results, error
// codes, normalised stats, watch events in the order delivered. The
// transcript holds nothing that differs between two correct runs (no
// zxids, times or session ids; stats are printed as relations), so the e2e
// test (tests/e2e/java_test.go) compares corral's transcript with the one
// ZooKeeper 3.9.3 produced, kept in ClientOps.golden.
//
// Usage: java -cp DIR:ZK_CLASSPATH ClientOps HOST:PORT TRANSCRIPT
//
// Event order without timing: see Events.drain.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.admin.ZooKeeperAdmin;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

public class ClientOps extends Transcript {
    static final List<ACL> OPEN = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    static final long WAIT_SECONDS = 60;

    static final Events events = new Events(WAIT_SECONDS);

    static Watcher w(String label) {
        return events.watcher(label);
    }

    /** A stat as relations that hold on every correct server. */
    static String st(Stat x, long me) {
        if (x == null) {
            return "null";
        }
        String owner;
        long o = x.getEphemeralOwner();
        if (o == 0) {
            owner = "none";
        } else if (o == me) {
            owner = "me";
        } else {
            owner = String.format("0x%x", o); // container and TTL markers
        }
        // Times only as an order: a write in the millisecond of the create
        // leaves mtime equal to ctime.
        return String.format("v=%d cv=%d av=%d len=%d kids=%d owner=%s m%sc p%sc %s",
            x.getVersion(), x.getCversion(), x.getAversion(), x.getDataLength(), x.getNumChildren(), owner,
            cmp(x.getMzxid(), x.getCzxid()), cmp(x.getPzxid(), x.getCzxid()),
            x.getCtime() <= x.getMtime() ? "ctime<=mtime" : "ctime>mtime");
    }

    static String cmp(long a, long b) {
        return a == b ? "=" : a > b ? ">" : "<";
    }

    /** Prints every event queued before a sync round trip, in order. */
    static void drain(ZooKeeper zk, String label) throws Exception {
        List<String> got = events.drain(zk);
        p("events after " + label + ": " + (got.isEmpty() ? "none" : String.join(", ", got)));
    }

    static String results(List<OpResult> rs, long me) {
        List<String> parts = new ArrayList<>();
        for (OpResult r : rs) {
            if (r instanceof OpResult.CreateResult) {
                OpResult.CreateResult c = (OpResult.CreateResult) r;
                parts.add("create " + c.getPath() + (c.getStat() == null ? "" : " [" + st(c.getStat(), me) + "]"));
            } else if (r instanceof OpResult.SetDataResult) {
                parts.add("setData [" + st(((OpResult.SetDataResult) r).getStat(), me) + "]");
            } else if (r instanceof OpResult.DeleteResult) {
                parts.add("delete");
            } else if (r instanceof OpResult.CheckResult) {
                parts.add("check");
            } else if (r instanceof OpResult.GetDataResult) {
                OpResult.GetDataResult g = (OpResult.GetDataResult) r;
                parts.add("getData " + s(g.getData()) + " [" + st(g.getStat(), me) + "]");
            } else if (r instanceof OpResult.GetChildrenResult) {
                List<String> kids = new ArrayList<>(((OpResult.GetChildrenResult) r).getChildren());
                Collections.sort(kids);
                parts.add("getChildren " + kids);
            } else if (r instanceof OpResult.ErrorResult) {
                parts.add("error " + KeeperException.Code.get(((OpResult.ErrorResult) r).getErr()));
            } else {
                parts.add(r.getClass().getSimpleName());
            }
        }
        return String.join("; ", parts);
    }

    static ZooKeeper connect(String cs) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        Watcher queue = w("default");
        ZooKeeper zk = new ZooKeeper(cs, 30000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
            }
            queue.process(e);
        });
        if (!up.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no session with " + cs);
        }
        return zk;
    }

    /** The session's identities, sorted. */
    static String who(ZooKeeper zk) throws InterruptedException {
        List<String> ids = new ArrayList<>();
        for (ClientInfo ci : zk.whoAmI()) {
            ids.add(ci.getAuthScheme() + ":" + ci.getUser());
        }
        Collections.sort(ids);
        return ids.toString();
    }

    static List<String> sorted(List<String> l) {
        List<String> c = new ArrayList<>(l);
        Collections.sort(c);
        return c;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClientOps HOST:PORT TRANSCRIPT");
            System.exit(2);
        }
        String cs = args[0];
        open(args[1]);
        ZooKeeper zk = connect(cs);
        final long me = zk.getSessionId();
        p("negotiated session timeout " + zk.getSessionTimeout());

        // Create and read back.
        op("create /j", () -> zk.create("/j", b("root"), OPEN, CreateMode.PERSISTENT));
        op("create /j again", () -> zk.create("/j", b("x"), OPEN, CreateMode.PERSISTENT));
        op("create /j/a with stat", () -> {
            Stat x = new Stat();
            String path = zk.create("/j/a", b("a"), OPEN, CreateMode.PERSISTENT, x);
            return path + " [" + st(x, me) + "]";
        });
        op("create /nope/child", () -> zk.create("/nope/child", b(""), OPEN, CreateMode.PERSISTENT));
        op("create /j/null-data", () -> zk.create("/j/null-data", null, OPEN, CreateMode.PERSISTENT));
        op("getData /j/null-data", () -> s(zk.getData("/j/null-data", false, null)));
        op("create with empty ACL", () -> zk.create("/j/noacl", b(""), new ArrayList<>(), CreateMode.PERSISTENT));
        op("exists /j/a watch", () -> st(zk.exists("/j/a", true), me));
        op("getData /j/a watch", () -> {
            Stat x = new Stat();
            return s(zk.getData("/j/a", true, x)) + " [" + st(x, me) + "]";
        });
        op("exists /j/none watch", () -> st(zk.exists("/j/none", w("exists-none")), me));
        op("setData /j/a v0", () -> st(zk.setData("/j/a", b("a2"), 0), me));
        drain(zk, "setData with two data watches of the default watcher");
        op("setData /j/a v0 again", () -> st(zk.setData("/j/a", b("a3"), 0), me));
        op("setData /j/a any version", () -> st(zk.setData("/j/a", b("a3"), -1), me));
        op("getChildren /j watch", () -> sorted(zk.getChildren("/j", w("children-j"))).toString());
        op("create /j/none", () -> zk.create("/j/none", b("n"), OPEN, CreateMode.PERSISTENT));
        drain(zk, "create under a child watch and an exists watch");
        op("getChildren2 /j", () -> {
            Stat x = new Stat();
            return sorted(zk.getChildren("/j", false, x)) + " [" + st(x, me) + "]";
        });
        op("getData /nope", () -> s(zk.getData("/nope", false, null)));
        op("exists /nope", () -> st(zk.exists("/nope", false), me));

        // Sequential, ephemeral, container and TTL nodes.
        for (int i = 0; i < 3; i++) {
            op("create /j/s- sequential", () -> zk.create("/j/s-", b(""), OPEN, CreateMode.PERSISTENT_SEQUENTIAL));
        }
        op("create /j/e ephemeral", () -> {
            Stat x = new Stat();
            return zk.create("/j/e", b("e"), OPEN, CreateMode.EPHEMERAL, x) + " [" + st(x, me) + "]";
        });
        op("create /j/e/child", () -> zk.create("/j/e/child", b(""), OPEN, CreateMode.PERSISTENT));
        op("create /j/es- ephemeral sequential", () -> zk.create("/j/es-", b(""), OPEN, CreateMode.EPHEMERAL_SEQUENTIAL));
        op("create /j/c container", () -> {
            Stat x = new Stat();
            return zk.create("/j/c", b(""), OPEN, CreateMode.CONTAINER, x) + " [" + st(x, me) + "]";
        });
        op("create /j/t ttl", () -> {
            Stat x = new Stat();
            return zk.create("/j/t", b(""), OPEN, CreateMode.PERSISTENT_WITH_TTL, x, 600000) + " [" + st(x, me) + "]";
        });
        op("create /j/ts- ttl sequential", () -> zk.create("/j/ts-", b(""), OPEN, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL, null, 600000));
        op("getEphemerals /j", () -> sorted(zk.getEphemerals("/j")).toString());
        op("getEphemerals", () -> sorted(zk.getEphemerals()).toString());
        op("getAllChildrenNumber /j", () -> Integer.toString(zk.getAllChildrenNumber("/j")));
        op("getAllChildrenNumber /", () -> Integer.toString(zk.getAllChildrenNumber("/")));

        // Deletes.
        op("delete /j (not empty)", () -> { zk.delete("/j", -1); return "ok"; });
        op("delete /j/none v5", () -> { zk.delete("/j/none", 5); return "ok"; });
        op("delete /j/none v0", () -> { zk.delete("/j/none", 0); return "ok"; });
        op("delete /j/none again", () -> { zk.delete("/j/none", -1); return "ok"; });
        drain(zk, "delete");

        // multi, transactions, multiRead.
        op("multi ok", () -> results(zk.multi(Arrays.asList(
            Op.create("/j/m", b("m"), OPEN, CreateMode.PERSISTENT),
            Op.create("/j/m/k-", b(""), OPEN, CreateMode.PERSISTENT_SEQUENTIAL),
            Op.setData("/j/m", b("m2"), 0),
            Op.check("/j/m", 1),
            Op.delete("/j/a", -1))), me));
        op("multi failing", () -> {
            try {
                return results(zk.multi(Arrays.asList(
                    Op.create("/j/m2", b(""), OPEN, CreateMode.PERSISTENT),
                    Op.check("/j/m", 7),
                    Op.setData("/j/m", b("x"), -1))), me);
            } catch (KeeperException e) {
                return code(e) + " results " + results(e.getResults(), me);
            }
        });
        op("exists /j/m2 after failed multi", () -> st(zk.exists("/j/m2", false), me));
        op("transaction", () -> results(zk.transaction()
            .create("/j/tx", b("t"), OPEN, CreateMode.PERSISTENT)
            .setData("/j/tx", b("t2"), 0)
            .commit(), me));
        op("multiRead", () -> results(zk.multi(Arrays.asList(
            Op.getData("/j/tx"),
            Op.getChildren("/j/m"),
            Op.getData("/j/absent"))), me));

        // ACLs and authentication.
        List<ACL> digest = new ArrayList<>();
        digest.add(new ACL(ZooDefs.Perms.ALL, new Id("digest", DigestAuthenticationProvider.generateDigest("u:p"))));
        digest.add(new ACL(ZooDefs.Perms.READ, new Id("world", "anyone")));
        op("create /j/acl digest", () -> zk.create("/j/acl", b("secret"), digest, CreateMode.PERSISTENT));
        op("getData /j/acl", () -> s(zk.getData("/j/acl", false, null)));
        op("setData /j/acl no auth", () -> st(zk.setData("/j/acl", b("x"), -1), me));
        op("create /j/acl/kid no auth", () -> zk.create("/j/acl/kid", b(""), OPEN, CreateMode.PERSISTENT));
        op("getACL /j/acl", () -> {
            Stat x = new Stat();
            List<ACL> acl = zk.getACL("/j/acl", x);
            return acl + " [" + st(x, me) + "]";
        });
        zk.addAuthInfo("digest", b("u:p"));
        op("setData /j/acl with auth", () -> st(zk.setData("/j/acl", b("x"), -1), me));
        op("setACL /j/acl v0", () -> st(zk.setACL("/j/acl", ZooDefs.Ids.CREATOR_ALL_ACL, 0), me));
        op("setACL /j/acl v0 again", () -> st(zk.setACL("/j/acl", OPEN, 0), me));
        op("getACL /j/acl after", () -> zk.getACL("/j/acl", new Stat()).toString());
        op("whoAmI", () -> who(zk));

        // Persistent and persistent-recursive watches, watch removal.
        zk.addWatch("/j/r", w("recursive"), AddWatchMode.PERSISTENT_RECURSIVE);
        zk.addWatch("/j/p", w("persistent"), AddWatchMode.PERSISTENT);
        op("create /j/r", () -> zk.create("/j/r", b(""), OPEN, CreateMode.PERSISTENT));
        op("create /j/r/x", () -> zk.create("/j/r/x", b(""), OPEN, CreateMode.PERSISTENT));
        op("setData /j/r/x", () -> st(zk.setData("/j/r/x", b("1"), -1), me));
        op("delete /j/r/x", () -> { zk.delete("/j/r/x", -1); return "ok"; });
        op("create /j/p", () -> zk.create("/j/p", b(""), OPEN, CreateMode.PERSISTENT));
        op("create /j/p/k", () -> zk.create("/j/p/k", b(""), OPEN, CreateMode.PERSISTENT));
        op("setData /j/p", () -> st(zk.setData("/j/p", b("1"), -1), me));
        op("setData /j/p/k", () -> st(zk.setData("/j/p/k", b("1"), -1), me));
        drain(zk, "persistent watches");
        op("removeAllWatches /j/r", () -> { zk.removeAllWatches("/j/r", Watcher.WatcherType.Any, false); return "ok"; });
        op("create /j/r/y", () -> zk.create("/j/r/y", b(""), OPEN, CreateMode.PERSISTENT));
        drain(zk, "removing the recursive watch");
        Watcher dw = w("removable");
        op("getData /j/tx own watcher", () -> s(zk.getData("/j/tx", dw, null)));
        op("removeWatches /j/tx data", () -> { zk.removeWatches("/j/tx", dw, Watcher.WatcherType.Data, false); return "ok"; });
        op("removeWatches /j/tx again", () -> { zk.removeWatches("/j/tx", dw, Watcher.WatcherType.Data, false); return "ok"; });
        op("setData /j/tx", () -> st(zk.setData("/j/tx", b("t3"), -1), me));
        drain(zk, "removing a data watch");

        // The /zookeeper subtree and getConfig.
        op("getChildren /zookeeper", () -> sorted(zk.getChildren("/zookeeper", false)).toString());
        op("getData /zookeeper/quota", () -> s(zk.getData("/zookeeper/quota", false, null)));
        op("getConfig", () -> {
            Stat x = new Stat();
            byte[] d = zk.getConfig(false, x);
            return (d == null ? "null" : d.length + " bytes") + " [" + st(x, me) + "]";
        });

        // reconfig is refused while reconfigEnabled is false (the default),
        // even for super; a read-only capable client gets a normal session.
        ZooKeeperAdmin admin = new ZooKeeperAdmin(cs, 30000, e -> { });
        admin.addAuthInfo("digest", b("super:test"));
        op("reconfig (disabled)", () -> new String(admin.reconfigure(null, "3", null, -1, new Stat()), StandardCharsets.UTF_8));
        admin.close();
        CountDownLatch roUp = new CountDownLatch(1);
        List<String> roStates = Collections.synchronizedList(new ArrayList<>());
        ZooKeeper ro = new ZooKeeper(cs, 30000, e -> {
            if (e.getType() == Watcher.Event.EventType.None) {
                roStates.add(e.getState().toString());
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    roUp.countDown();
                }
            }
        }, true);
        if (!roUp.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no read-only-capable session");
        }
        op("read-only-capable client", () -> roStates + " " + s(ro.getData("/j/tx", false, null)));
        ro.close();

        // Asynchronous calls complete in the order they were issued.
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(6);
        for (String path : new String[] {"/j/async-1", "/j/async-2", "/j/async-1", "/j/async-3", "/nope/async"}) {
            zk.create(path, b(""), OPEN, CreateMode.PERSISTENT, (rc, p, ctx, name) -> {
                order.add(KeeperException.Code.get(rc) + " " + p + " " + name);
                done.countDown();
            }, null);
        }
        zk.getData("/j/async-2", false, (rc, p, ctx, data, stat) -> {
            order.add("getData " + KeeperException.Code.get(rc) + " " + p);
            done.countDown();
        }, null);
        if (!done.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("async callbacks missing");
        }
        p("async callbacks: " + order);

        // A chrooted client sees /j as its root.
        ZooKeeper chroot = connect(cs + "/j");
        op("chroot getChildren /", () -> sorted(chroot.getChildren("/", false)).toString());
        op("chroot create /chroot-x", () -> chroot.create("/chroot-x", b(""), OPEN, CreateMode.PERSISTENT));
        op("chroot create /cs- sequential", () -> chroot.create("/cs-", b(""), OPEN, CreateMode.EPHEMERAL_SEQUENTIAL));
        op("chroot multi", () -> results(chroot.multi(Arrays.asList(
            Op.create("/chroot-y", b(""), OPEN, CreateMode.PERSISTENT),
            Op.create("/chroot-y/z-", b(""), OPEN, CreateMode.PERSISTENT_SEQUENTIAL),
            Op.delete("/r/y", -1))), me));
        op("chroot multiRead", () -> results(chroot.multi(Arrays.asList(
            Op.getChildren("/chroot-y"),
            Op.getData("/tx"))), me));
        op("exists /j/chroot-x", () -> st(zk.exists("/j/chroot-x", false), me));
        op("exists the chroot's ephemeral, watch", () -> {
            List<String> eph = new ArrayList<>();
            for (String c : zk.getChildren("/j", false)) {
                if (c.startsWith("cs-")) {
                    eph.add(c);
                }
            }
            Stat x = zk.exists("/j/" + eph.get(0), w("other-session"));
            return eph + " owned by the chroot's session: " + (x.getEphemeralOwner() == chroot.getSessionId());
        });
        chroot.close();
        drain(zk, "closing the other session");
        op("exists chroot ephemeral after close", () -> {
            for (String c : zk.getChildren("/j", false)) {
                if (c.startsWith("cs-")) {
                    return "still there: " + c;
                }
            }
            return "gone";
        });

        // Watches on deletion, the root's stat, ip and auth ACLs, super.
        op("getData /j/tx watch, getChildren /j/m watch", () -> s(zk.getData("/j/tx", w("data-tx"), null))
            + " " + sorted(zk.getChildren("/j/m", w("children-m"))));
        op("multi delete /j/m/k-0000000000, /j/m, /j/tx", () -> results(zk.multi(Arrays.asList(
            Op.delete("/j/m/k-0000000000", -1), Op.delete("/j/m", -1), Op.delete("/j/tx", -1))), me));
        drain(zk, "deleting watched nodes");
        op("exists / ", () -> st(zk.exists("/", false), me));
        op("exists /zookeeper", () -> st(zk.exists("/zookeeper", false), me));
        List<ACL> local = Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id("ip", "127.0.0.1")));
        List<ACL> elsewhere = Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id("ip", "10.1.2.0/24")));
        op("create /j/ip-local", () -> zk.create("/j/ip-local", b("l"), local, CreateMode.PERSISTENT));
        op("setData /j/ip-local", () -> st(zk.setData("/j/ip-local", b("l2"), -1), me));
        op("create /j/ip-else", () -> zk.create("/j/ip-else", b("e"), elsewhere, CreateMode.PERSISTENT));
        op("getData /j/ip-else", () -> s(zk.getData("/j/ip-else", false, null)));
        op("getACL /j/ip-else", () -> zk.getACL("/j/ip-else", new Stat()).toString().replace("\n", " "));
        op("create /j/bad-ip-acl", () -> zk.create("/j/bad-ip-acl", b(""),
            Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id("ip", "not-an-address"))), CreateMode.PERSISTENT));
        op("create /j/unknown-scheme-acl", () -> zk.create("/j/unknown-scheme-acl", b(""),
            Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id("nosuch", "x"))), CreateMode.PERSISTENT));
        ZooKeeper anon = connect(cs);
        op("anonymous create with creator ACL", () -> anon.create("/j/creator", b(""), ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT));
        op("anonymous getData /j/ip-else", () -> s(anon.getData("/j/ip-else", false, null)));
        anon.addAuthInfo("digest", b("super:test"));
        op("super getData /j/ip-else", () -> s(anon.getData("/j/ip-else", false, null)));
        op("super delete /j/ip-else", () -> { anon.delete("/j/ip-else", -1); return "ok"; });
        op("super whoAmI", () -> who(anon));
        anon.close();

        zk.close();
        ZooKeeper again = connect(cs);
        op("ephemerals after close", () -> sorted(again.getEphemerals("/j")).toString());
        op("getChildren /j at the end", () -> sorted(again.getChildren("/j", false)).toString());
        again.close();
        p("done");
        close();
    }
}
