// Transcript is what the programs of tests/java share: they extend it to
// write their transcript, one line per step, with the helpers below.
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

import org.apache.zookeeper.KeeperException;

class Transcript {
    private static PrintWriter out;

    static void open(String path) throws IOException {
        out = new PrintWriter(Files.newBufferedWriter(Paths.get(path), StandardCharsets.UTF_8));
    }

    static void close() {
        out.close();
    }

    /** Writes one line, flushed, so a failed run shows how far it got. */
    static void p(String s) {
        out.println(s);
        out.flush();
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] d) {
        return d == null ? "null" : "\"" + new String(d, StandardCharsets.UTF_8) + "\"";
    }

    static String code(KeeperException e) {
        return "error " + e.code();
    }

    interface Call {
        String run() throws Exception;
    }

    /** Runs c and writes its result, or the KeeperException's code. */
    static void op(String what, Call c) throws Exception {
        try {
            p(what + " -> " + c.run());
        } catch (KeeperException e) {
            p(what + " -> " + code(e));
        }
    }
}
