// ZkProbe reads files the way Apache ZooKeeper does and prints what it
// sees, for config's differential tests (zookeeper_test.go). Usage:
//   java -cp 'zookeeper/lib/*' ZkProbe.java OUT props:FILE|qpc:FILE ...
// For props:FILE it prints java.util.Properties.load's pairs (hex UTF-8);
// for qpc:FILE what QuorumPeerConfig.parse makes of the file.
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.zookeeper.server.quorum.QuorumPeer.QuorumServer;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

public class ZkProbe {
    static final String[] SYSPROPS = {
        "snapCount", "forceSync", "globalOutstandingLimit", "4lw.commands.whitelist",
        "extendedTypesEnabled", "DigestAuthenticationProvider.superDigest", "durability",
    };

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(args[0]), true, "UTF-8");
        for (int i = 1; i < args.length; i++) {
            int colon = args[i].indexOf(':');
            String mode = args[i].substring(0, colon);
            String path = args[i].substring(colon + 1);
            out.println("FILE " + path);
            try {
                if (mode.equals("props")) {
                    props(out, path);
                } else {
                    qpc(out, path);
                }
            } catch (Throwable t) {
                StringBuilder sb = new StringBuilder();
                for (Throwable c = t; c != null; c = c.getCause()) {
                    sb.append(" | ").append(c);
                }
                out.println("ERROR" + sb.toString().replace('\n', ' '));
            }
            out.println("END");
        }
        out.close();
    }

    static void props(PrintStream out, String path) throws Exception {
        Properties p = new Properties();
        try (InputStream in = new FileInputStream(path)) {
            p.load(in);
        }
        TreeMap<String, String> m = new TreeMap<>();
        for (String k : p.stringPropertyNames()) {
            m.put(hex(k), hex(p.getProperty(k)));
        }
        for (Map.Entry<String, String> e : m.entrySet()) {
            out.println("P " + e.getKey() + " " + e.getValue());
        }
    }

    static void qpc(PrintStream out, String path) throws Exception {
        for (String k : SYSPROPS) {
            System.clearProperty("zookeeper." + k);
        }
        // Static in QuorumPeerConfig: reset to the defaults between files.
        QuorumPeerConfig.setStandaloneEnabled(true);
        QuorumPeerConfig.setReconfigEnabled(false);
        QuorumPeerConfig c = new QuorumPeerConfig();
        c.parse(path);
        out.println("tickTime " + c.getTickTime());
        out.println("initLimit " + c.getInitLimit());
        out.println("syncLimit " + c.getSyncLimit());
        out.println("dataDir " + c.getDataDir().getPath());
        out.println("dataLogDir " + c.getDataLogDir().getPath());
        out.println("clientPortAddress " + addr(c.getClientPortAddress()));
        out.println("maxClientCnxns " + c.getMaxClientCnxns());
        out.println("minSessionTimeout " + c.getMinSessionTimeout());
        out.println("maxSessionTimeout " + c.getMaxSessionTimeout());
        out.println("snapRetainCount " + c.getSnapRetainCount());
        out.println("purgeInterval " + c.getPurgeInterval());
        out.println("syncEnabled " + c.getSyncEnabled());
        out.println("quorumListenOnAllIPs " + c.getQuorumListenOnAllIPs());
        out.println("standaloneEnabled " + QuorumPeerConfig.isStandaloneEnabled());
        out.println("reconfigEnabled " + QuorumPeerConfig.isReconfigEnabled());
        out.println("serverId " + c.getServerId());
        out.println("distributed " + c.isDistributed());
        for (QuorumServer s : new TreeMap<>(c.getServers()).values()) {
            out.println("server " + s.id + " " + s.addr.getOne().getHostString() + " " + s.addr.getOne().getPort()
                + " " + s.electionAddr.getOne().getPort() + " " + s.type.toString().toLowerCase()
                + " " + (s.isClientAddrFromStatic ? "-" : addr(s.clientAddr)));
        }
        for (String k : SYSPROPS) {
            String v = System.getProperty("zookeeper." + k);
            out.println("sys " + k + " " + (v == null ? "-" : hex(v)));
        }
    }

    static String addr(InetSocketAddress a) {
        return a == null ? "-" : a.getHostString() + "|" + a.getPort();
    }

    static String hex(String s) {
        if (s.isEmpty()) {
            return "-";
        }
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            sb.append(String.format("%02x", b & 0xff));
        }
        return sb.toString();
    }
}
