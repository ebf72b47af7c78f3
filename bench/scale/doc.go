// Package scale is `corral-bench scale`: servers and clients scaled
// together (N = 1..8) with a Universal Scalability Law fit per target
// (Config, DefaultConfig, Run, Report). Its trial runner is shared with package factorial.
package scale
