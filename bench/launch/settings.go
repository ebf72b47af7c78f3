package launch

// Settings say how an experiment starts its servers: the corral binary
// and ZooKeeper's jars (located or built when empty), the JVM and its
// heap, zoo.cfg's timing, and where the run's files go. An experiment's
// Config embeds them; corral-bench's server flags fill them in.
type Settings struct {
	CorralBin, ZKLib, Java, JavaHeap string
	Timing                           Timing
	// WorkDir is the parent of the run's temporary directory (empty: the
	// system's temporary directory).
	WorkDir string
	// Keep keeps the temporary directory after the run.
	Keep bool
}

// DefaultSettings: corral and ZooKeeper located or built, "java" with
// DefaultJavaHeap, DefaultTiming, a temporary directory removed after
// the run.
func DefaultSettings() Settings {
	return Settings{Java: "java", JavaHeap: DefaultJavaHeap, Timing: DefaultTiming()}
}
