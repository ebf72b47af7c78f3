// TLSClient connects with ZooKeeper's own Java client over TLS (Netty
// socket, zookeeper.client.secure=true and zookeeper.ssl.* given as -D
// flags by tests/e2e/tls_test.go), prints whoAmI, then creates a node
// readable only by the x509 id of its own certificate, the subject as
// the JDK names it, and reads it back. Arguments: the connect string,
// the path, and how many seconds to wait for a connection (exit status
// 3 when none came).
import java.io.FileInputStream;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;

public class TLSClient {
    public static void main(String[] args) throws Exception {
        String connect = args[0];
        String path = args[1];
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, new ZKClientConfig());
        if (!connected.await(Integer.parseInt(args[2]), TimeUnit.SECONDS)) {
            System.out.println("not connected");
            zk.close();
            System.exit(3);
        }
        System.out.println("connected");
        for (ClientInfo ci : zk.whoAmI()) {
            System.out.println("whoami " + ci.getAuthScheme() + " " + ci.getUser());
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(System.getProperty("zookeeper.ssl.keyStore.location"))) {
            ks.load(in, System.getProperty("zookeeper.ssl.keyStore.password").toCharArray());
        }
        X509Certificate cert = null;
        for (String alias : Collections.list(ks.aliases())) {
            if (ks.isKeyEntry(alias)) {
                cert = (X509Certificate) ks.getCertificate(alias);
            }
        }
        String name = cert.getSubjectX500Principal().getName();
        System.out.println("subject " + name);
        List<ACL> acl = new ArrayList<>(Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id("x509", name))));
        try {
            zk.create(path, "java".getBytes(), acl, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // a second client reads the first one's node
        }
        try {
            System.out.println("read " + new String(zk.getData(path, false, null)));
        } catch (KeeperException e) {
            System.out.println("read error " + e.code());
        }
        zk.close();
    }
}
