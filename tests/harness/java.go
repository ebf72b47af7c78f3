package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Java is Apache ZooKeeper's Java client, ready to run a program of
// tests/java: the JDK's java and javac and a classpath of the 3.9.3 jars
// followed by Apache Curator's (scripts/curator). Whatever the target, the
// client is ZooKeeper's own.
type Java struct {
	Java, Javac string
	Classpath   string
}

var (
	javaOnce sync.Once
	javaRes  *Java
	javaErr  error
)

// JavaClient resolves the Java client once per test binary. A missing
// JDK or jars stop the test as Require does: a skip on a developer's
// machine, a failure under CI.
func (e *Env) JavaClient(t testing.TB) *Java {
	t.Helper()
	e.Require(t)
	javaOnce.Do(func() { javaRes, javaErr = resolveJava(e.Root) })
	if javaErr != nil {
		if e.ci {
			t.Fatalf("Java client unavailable (CI is set, so this fails): %v", javaErr)
		}
		t.Skipf("Java client unavailable: %v", javaErr)
	}
	return javaRes
}

func resolveJava(root string) (*Java, error) {
	j := &Java{}
	var err error
	if j.Java, err = exec.LookPath("java"); err != nil {
		return nil, fmt.Errorf("java not found: %w", err)
	}
	if j.Javac, err = exec.LookPath("javac"); err != nil {
		return nil, fmt.Errorf("javac not found: %w", err)
	}
	if j.Classpath, err = zookeeperClasspath(root); err != nil {
		return nil, err
	}
	curator, err := scriptOutput(root, "scripts/curator/fetch.sh")
	if err != nil {
		return nil, err
	}
	j.Classpath += string(os.PathListSeparator) + filepath.Join(curator, "*")
	return j, nil
}

// quietLogback keeps the client's logging (logback, on the classpath with
// the server's jars) to warnings on stderr.
const quietLogback = `<configuration>
  <appender name="E" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="E"/></root>
</configuration>
`

// Compile compiles tests/java/NAME.java for each name (a program and the
// helpers it uses) into a directory of the test's and returns that
// directory.
func (j *Java) Compile(t testing.TB, root string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-nowarn", "-cp", j.Classpath, "-d", dir}
	for _, name := range names {
		args = append(args, filepath.Join(root, "tests", "java", name+".java"))
	}
	if out, err := exec.Command(j.Javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac %v: %v\n%s", names, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "logback-quiet.xml"), []byte(quietLogback), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Command is the command that runs the compiled class main from dir with
// args, for a caller that talks to it (stdin, stdout).
func (j *Java) Command(dir, main string, args ...string) *exec.Cmd {
	argv := append([]string{
		"-Xmx256m",
		"-Dlogback.configurationFile=" + filepath.Join(dir, "logback-quiet.xml"),
		"-cp", dir + string(os.PathListSeparator) + j.Classpath, main,
	}, args...)
	return exec.Command(j.Java, argv...)
}

// Run runs the compiled class main from dir with args; it returns the
// program's combined output (the client's warnings) and its error.
func (j *Java) Run(dir, main string, args ...string) ([]byte, error) {
	return j.Command(dir, main, args...).CombinedOutput()
}

// Transcript runs the compiled program main from dir against the servers
// of connect and returns the transcript it wrote; a program that fails
// fails the test, showing how far its transcript got.
func (j *Java) Transcript(t testing.TB, dir, main, connect string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "transcript.txt")
	out, err := j.Run(dir, main, connect, path)
	if len(out) > 0 {
		t.Logf("java client output:\n%s", out)
	}
	got, rerr := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v; transcript so far:\n%s", main, err, got)
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
	return got
}

// CompareGolden compares a Java program's transcript with the reference's
// in tests/java/NAME.golden, line by line. With update it writes the
// golden file instead, which only a run against ZooKeeper may do.
func (e *Env) CompareGolden(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	golden := filepath.Join(e.Root, "tests", "java", name+".golden")
	if update {
		if !e.IsZooKeeper() {
			t.Fatalf("updating %s.golden writes the reference's transcript: run it with %s=zookeeper", name, EnvTarget)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("%s line %d:\n got  %s\n want %s", name, i+1, g, w)
		}
	}
}
