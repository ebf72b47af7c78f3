module github.com/corral-db/corral

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
