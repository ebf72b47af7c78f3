// CuratorOps drives a ZooKeeper server with Apache Curator 5.9.0 on
// ZooKeeper 3.9.3's Java client: the framework's builders (parents,
// containers, TTL, orSetData, transactions, persistent recursive watches)
// and the recipes applications rely on (mutex, semaphore, leader latch,
// atomic long, shared count, queue, barrier, persistent ephemeral node,
// CuratorCache). It writes a transcript with nothing run-specific in it;
// the test (tests/e2e/java_test.go) compares it with ZooKeeper's, kept in
// CuratorOps.golden.
//
// Usage: java -cp DIR:ZK_CLASSPATH:CURATOR_CLASSPATH CuratorOps HOST:PORT TRANSCRIPT
//
// Nothing here depends on timing: a wait either ends with the outcome the
// transcript records or fails the run after WAIT_SECONDS; the only short
// waits are tries that must fail (a lock held by another client).
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

public class CuratorOps extends Transcript {
    static final long WAIT_SECONDS = 60;

    static CuratorFramework client(String cs) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(cs, 30000, 15000, new RetryNTimes(10, 500));
        c.start();
        if (!c.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Curator did not connect to " + cs);
        }
        return c;
    }

    /**
     * Brings c's server up to date with the leader before c reads what the
     * other client wrote: on an ensemble the two may be on different
     * members, and ZooKeeper promises each client its own order only.
     */
    static void syncNow(CuratorFramework c, String path) throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        c.getZookeeperClient().getZooKeeper().sync(path, (rc, p, ctx) -> done.countDown(), null);
        if (!done.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("sync of " + path + " never answered");
        }
    }

    static String stat(Stat x) {
        return x == null ? "null" : "v=" + x.getVersion() + " cv=" + x.getCversion() + " kids=" + x.getNumChildren()
            + " len=" + x.getDataLength() + " ephemeral=" + (x.getEphemeralOwner() != 0);
    }

    static List<String> sorted(Collection<String> l) {
        List<String> c = new ArrayList<>(l);
        Collections.sort(c);
        return c;
    }

    /** Waits for the next line on q; fails the run if none comes. */
    static String next(BlockingQueue<String> q, String what) throws InterruptedException {
        String e = q.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (e == null) {
            throw new IllegalStateException("no " + what + " within " + WAIT_SECONDS + " s");
        }
        return e;
    }

    /** Polls until path is gone (a reaped container); fails the run if it stays. */
    static String awaitGone(CuratorFramework c, String path) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (c.checkExists().forPath(path) != null) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException(path + " still there after " + WAIT_SECONDS + " s");
            }
            Thread.sleep(100);
        }
        return "gone";
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: CuratorOps HOST:PORT TRANSCRIPT");
            System.exit(2);
        }
        open(args[1]);
        CuratorFramework c1 = client(args[0]);
        CuratorFramework c2 = client(args[0]);

        // The framework's builders.
        op("create with parents", () -> c1.create().creatingParentsIfNeeded().forPath("/cur/a/b/c", b("c")));
        op("stat /cur/a", () -> stat(c1.checkExists().forPath("/cur/a")));
        op("create with container parents", () -> c1.create().creatingParentContainersIfNeeded().forPath("/cur/box/x", b("")));
        op("delete /cur/box/x", () -> { c1.delete().forPath("/cur/box/x"); return "ok"; });
        op("container /cur/box reaped", () -> awaitGone(c1, "/cur/box"));
        op("create or set (create)", () -> c1.create().orSetData().forPath("/cur/os", b("1")));
        op("create or set (set)", () -> c1.create().orSetData().forPath("/cur/os", b("2")));
        op("getData /cur/os", () -> {
            Stat x = new Stat();
            return s(c1.getData().storingStatIn(x).forPath("/cur/os")) + " " + stat(x);
        });
        op("setData v0", () -> stat(c1.setData().withVersion(0).forPath("/cur/os", b("3"))));
        op("ttl node", () -> c1.create().withTtl(600000).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath("/cur/ttl", b("")));
        op("ephemeral sequential", () -> c1.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/cur/es-", b("")));
        op("protected ephemeral sequential, name shape", () -> {
            String path = c1.create().withProtection().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/cur/p-", b(""));
            return path.matches("/cur/_c_[0-9a-f-]{36}-p-\\d{10}") ? "_c_<uuid>-p-<10 digits>" : path;
        });
        op("children /cur", () -> {
            List<String> kids = new ArrayList<>();
            for (String k : c1.getChildren().forPath("/cur")) {
                kids.add(k.startsWith("_c_") ? "_c_<uuid>" + k.substring(k.indexOf("-p-")) : k);
            }
            return sorted(kids).toString();
        });
        op("transaction", () -> {
            List<String> rs = new ArrayList<>();
            for (CuratorTransactionResult r : c1.transaction().forOperations(
                    c1.transactionOp().create().forPath("/cur/t1", b("t")),
                    c1.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath("/cur/t1/s-", b("")),
                    c1.transactionOp().setData().withVersion(0).forPath("/cur/t1", b("u")),
                    c1.transactionOp().check().withVersion(1).forPath("/cur/t1"),
                    c1.transactionOp().delete().forPath("/cur/a/b/c"))) {
                rs.add(r.getType() + " " + r.getForPath() + " -> " + r.getResultPath() + " err " + r.getError());
            }
            return rs.toString();
        });
        op("failing transaction", () -> {
            try {
                c1.transaction().forOperations(
                    c1.transactionOp().create().forPath("/cur/t2", b("")),
                    c1.transactionOp().delete().withVersion(9).forPath("/cur/t1"));
                return "committed?";
            } catch (KeeperException e) {
                return "error " + e.code() + ", /cur/t2 " + (c1.checkExists().forPath("/cur/t2") == null ? "absent" : "present");
            }
        });
        op("delete with children", () -> { c1.delete().deletingChildrenIfNeeded().forPath("/cur/a"); return "ok"; });
        op("guaranteed delete", () -> { c1.delete().guaranteed().forPath("/cur/t1/s-0000000000"); return "ok"; });
        BlockingQueue<String> watched = new LinkedBlockingQueue<>();
        c1.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher((Watcher) e -> {
            if (e.getType() != Watcher.Event.EventType.None) {
                watched.add(e.getType() + " " + e.getPath());
            }
        }).forPath("/cur/w");
        c2.create().creatingParentsIfNeeded().forPath("/cur/w/a/b", b(""));
        op("recursive watch, parents created by another client",
            () -> next(watched, "event") + ", " + next(watched, "event") + ", " + next(watched, "event"));
        c2.setData().forPath("/cur/w/a/b", b("x"));
        op("recursive watch, setData", () -> next(watched, "event"));

        // Recipes.
        InterProcessMutex m1 = new InterProcessMutex(c1, "/cur/locks/m");
        InterProcessMutex m2 = new InterProcessMutex(c2, "/cur/locks/m");
        op("mutex: c1 acquires", () -> Boolean.toString(m1.acquire(WAIT_SECONDS, TimeUnit.SECONDS)));
        op("mutex: c1 re-enters", () -> Boolean.toString(m1.acquire(WAIT_SECONDS, TimeUnit.SECONDS)));
        op("mutex: c2 tries while c1 holds", () -> Boolean.toString(m2.acquire(200, TimeUnit.MILLISECONDS)));
        op("mutex: participants", () -> Integer.toString(m1.getParticipantNodes().size()));
        m1.release();
        m1.release();
        op("mutex: c2 acquires after c1 released", () -> Boolean.toString(m2.acquire(WAIT_SECONDS, TimeUnit.SECONDS)));
        m2.release();

        InterProcessSemaphoreV2 s1 = new InterProcessSemaphoreV2(c1, "/cur/sem", 2);
        InterProcessSemaphoreV2 s2 = new InterProcessSemaphoreV2(c2, "/cur/sem", 2);
        Collection<Lease> held = s1.acquire(2, WAIT_SECONDS, TimeUnit.SECONDS);
        op("semaphore: c1 holds", () -> Integer.toString(held == null ? 0 : held.size()));
        op("semaphore: c2 tries while full", () -> String.valueOf(s2.acquire(200, TimeUnit.MILLISECONDS)));
        Lease one = held.iterator().next();
        s1.returnLease(one);
        op("semaphore: c2 gets the returned lease", () -> {
            Lease l = s2.acquire(WAIT_SECONDS, TimeUnit.SECONDS);
            if (l == null) {
                return "none";
            }
            s2.returnLease(l);
            return "one";
        });
        for (Lease l : held) {
            if (l != one) {
                s1.returnLease(l);
            }
        }

        LeaderLatch l1 = new LeaderLatch(c1, "/cur/leader", "first");
        LeaderLatch l2 = new LeaderLatch(c2, "/cur/leader", "second");
        l1.start();
        op("latch: first leads", () -> Boolean.toString(l1.await(WAIT_SECONDS, TimeUnit.SECONDS)));
        l2.start();
        op("latch: second waits", () -> Boolean.toString(l2.await(200, TimeUnit.MILLISECONDS)));
        op("latch: leader seen by second", () -> {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (l2.getParticipants().size() < 2 && System.nanoTime() < end) {
                Thread.sleep(50);
            }
            return l2.getLeader().getId() + " of " + l2.getParticipants().size();
        });
        l1.close();
        op("latch: second leads after first closed", () -> Boolean.toString(l2.await(WAIT_SECONDS, TimeUnit.SECONDS)));
        l2.close();

        DistributedAtomicLong a1 = new DistributedAtomicLong(c1, "/cur/counter", new RetryNTimes(10, 10));
        DistributedAtomicLong a2 = new DistributedAtomicLong(c2, "/cur/counter", new RetryNTimes(10, 10));
        for (int i = 0; i < 3; i++) {
            op("atomic: c1 increments", () -> {
                AtomicValue<Long> v = a1.increment();
                return v.succeeded() + " " + v.preValue() + "->" + v.postValue();
            });
        }
        op("atomic: c2 adds 10", () -> {
            AtomicValue<Long> v = a2.add(10L);
            return v.succeeded() + " " + v.preValue() + "->" + v.postValue();
        });
        // compareAndSet compares with what c1's server holds and does not
        // retry a mismatch: without a sync, c1's server may not have
        // applied c2's add yet (ZooKeeper's own followers can lag the
        // same way).
        syncNow(c1, "/cur/counter");
        op("atomic: c1 compareAndSet(13, 20)", () -> Boolean.toString(a1.compareAndSet(13L, 20L).succeeded()));
        op("atomic: c2 compareAndSet(13, 30)", () -> Boolean.toString(a2.compareAndSet(13L, 30L).succeeded()));
        syncNow(c2, "/cur/counter");
        op("atomic: value", () -> Long.toString(a2.get().postValue()));

        SharedCount sc1 = new SharedCount(c1, "/cur/shared", 5);
        SharedCount sc2 = new SharedCount(c2, "/cur/shared", 99);
        sc1.start();
        sc2.start();
        op("shared count: seeded by the first", () -> sc1.getCount() + " " + sc2.getCount());
        VersionedValue<Integer> v0 = sc1.getVersionedValue();
        op("shared count: c1 trySet from its version", () -> Boolean.toString(sc1.trySetCount(v0, 6)));
        op("shared count: c2 trySet from the old version", () -> Boolean.toString(sc2.trySetCount(v0, 7)));
        sc1.close();
        sc2.close();

        SimpleDistributedQueue q1 = new SimpleDistributedQueue(c1, "/cur/queue");
        SimpleDistributedQueue q2 = new SimpleDistributedQueue(c2, "/cur/queue");
        for (String item : new String[] {"one", "two", "three"}) {
            q1.offer(b(item));
        }
        op("queue: c2 takes in order", () -> s(q2.take()) + " " + s(q2.take()) + " " + s(q2.poll(WAIT_SECONDS, TimeUnit.SECONDS)));
        op("queue: empty", () -> s(q2.poll()));

        DistributedBarrier bar1 = new DistributedBarrier(c1, "/cur/barrier");
        DistributedBarrier bar2 = new DistributedBarrier(c2, "/cur/barrier");
        bar1.setBarrier();
        syncNow(c2, "/cur/barrier");
        op("barrier: c2 blocked while set", () -> Boolean.toString(bar2.waitOnBarrier(200, TimeUnit.MILLISECONDS)));
        bar1.removeBarrier();
        op("barrier: c2 passes once removed", () -> Boolean.toString(bar2.waitOnBarrier(WAIT_SECONDS, TimeUnit.SECONDS)));

        PersistentNode pn = new PersistentNode(c1, CreateMode.EPHEMERAL, false, "/cur/members/me", b("here"));
        pn.start();
        op("persistent node created", () -> Boolean.toString(pn.waitForInitialCreate(WAIT_SECONDS, TimeUnit.SECONDS)));
        syncNow(c2, "/cur/members/me");
        op("persistent node seen by c2", () -> stat(c2.checkExists().forPath("/cur/members/me")));
        pn.close();
        syncNow(c2, "/cur/members/me");
        op("persistent node after close", () -> stat(c2.checkExists().forPath("/cur/members/me")));

        BlockingQueue<String> cached = new LinkedBlockingQueue<>();
        CountDownLatch primed = new CountDownLatch(1);
        c2.create().creatingParentsIfNeeded().forPath("/cur/cache/old", b("o"));
        syncNow(c1, "/cur/cache/old");
        CuratorCache cache = CuratorCache.build(c1, "/cur/cache");
        cache.listenable().addListener(CuratorCacheListener.builder()
            .forCreates(n -> cached.add("created " + n.getPath() + " " + s(n.getData())))
            .forChanges((o, n) -> cached.add("changed " + n.getPath() + " " + s(o.getData()) + "->" + s(n.getData())))
            .forDeletes(o -> cached.add("deleted " + o.getPath()))
            .forInitialized(primed::countDown)
            .build());
        cache.start();
        if (!primed.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("CuratorCache never initialized");
        }
        List<String> initial = new ArrayList<>();
        cached.drainTo(initial);
        op("cache: initial", () -> sorted(initial).toString());
        c2.create().forPath("/cur/cache/new", b("n"));
        op("cache: create by c2", () -> next(cached, "cache event"));
        c2.setData().forPath("/cur/cache/new", b("n2"));
        op("cache: change by c2", () -> next(cached, "cache event"));
        c2.delete().forPath("/cur/cache/old");
        op("cache: delete by c2", () -> next(cached, "cache event"));
        op("cache: contents", () -> {
            List<String> paths = new ArrayList<>();
            cache.stream().forEach(d -> paths.add(d.getPath() + "=" + s(d.getData())));
            return sorted(paths).toString();
        });
        cache.close();

        // Locks and semaphores leave container parents behind; the server
        // reaps them once empty.
        op("lock container reaped", () -> awaitGone(c1, "/cur/locks/m"));

        c2.close();
        c1.close();
        p("done");
        close();
    }
}
