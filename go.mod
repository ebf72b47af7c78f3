module github.com/corral-db/corral

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/anishathalye/porcupine v1.3.1
	github.com/go-zookeeper/zk v1.0.4
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)
