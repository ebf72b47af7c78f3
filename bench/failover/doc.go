// Package failover is `corral-bench failover`: the gap in a writer's
// successful writes when the leader of an ensemble is killed, over
// repeated trials (Config, Run, Report). The durability experiment's
// restoration figure reuses its trial.
package failover
