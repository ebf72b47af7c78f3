package proc

import (
	"os"
	"path/filepath"
)

// ZooKeeperMain is the class that starts a ZooKeeper server, standalone
// or an ensemble member, from a zoo.cfg.
const ZooKeeperMain = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

// ZooKeeperArgv is the command line that starts ZooKeeper from the
// zoo.cfg at cfgPath: java with jvmFlags (heap, GC, -D properties), the
// logback configuration at logback (see WriteLogback; none if ""), and
// classpath.
func ZooKeeperArgv(java string, jvmFlags []string, logback, classpath, cfgPath string) []string {
	if java == "" {
		java = "java"
	}
	argv := append([]string{java}, jvmFlags...)
	if logback != "" {
		argv = append(argv, "-Dlogback.configurationFile="+logback)
	}
	return append(argv, "-cp", classpath, ZooKeeperMain, cfgPath)
}

// LibClasspath is the classpath of every jar in the directory lib.
func LibClasspath(lib string) string { return filepath.Join(lib, "*") }

// logbackXML logs INFO to the console, as ZooKeeper's own
// conf/logback.xml does, without caller data. ZooKeeper's jars bring
// logback; without a configuration it logs DEBUG, which slows it down.
const logbackXML = `<configuration>
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{ISO8601} %-5p [%t] %c{1} - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="CONSOLE"/></root>
</configuration>
`

// WriteLogback writes ZooKeeper's logging configuration into dir and
// returns its path.
func WriteLogback(dir string) (string, error) {
	path := filepath.Join(dir, "logback.xml")
	return path, os.WriteFile(path, []byte(logbackXML), 0o644)
}
