// Package ensemble holds the process-level fault tests of a replicated
// ensemble: three or five real server processes (corral, or Apache
// ZooKeeper 3.9.3 as the reference, chosen by CORRAL_E2E_TARGET) on
// loopback, driven by go-zookeeper clients while the test kills
// (SIGKILL), stops (SIGTERM), freezes (SIGSTOP) and restarts members,
// never more than a minority of the voters at once.
//
// Every test records what the clients were told and checks it against
// what every server holds afterwards:
//
//   - TestKillLeaderAndFollowers: no acknowledged create is lost on any
//     server, and all servers agree on the tree and its znode count.
//   - TestObserver: three voters and an observer; the observer ends with
//     the same tree after its own kill and a leader kill.
//   - TestLinearizableCAS: a history of reads (after sync), conditional and
//     plain setData on a few znodes is linearizable (porcupine, with the
//     versioned-register model of internal/linmodel, which the simulator
//     checks against too; an operation cut off by a failure may or
//     may not have happened). The writes alone must be linearizable on
//     both targets; with the reads too, corral must pass, while ZooKeeper
//     3.9.3 occasionally does not (a deposed leader, continued after
//     SIGSTOP, answers sync+read from its stale tree for a moment), which
//     is logged as a known deviation. linmodel's own test shows the
//     checker can fail.
//   - TestAlgorithm52 and TestAlgorithm54: the failure-recovery and
//     restoration tests of the diskless-ZooKeeper thesis (Algorithms 5.2
//     and 5.4), on 3 and 5 servers in durability modes sync and diskless,
//     with fault schedules inside the diskless promise (at most f of 2f+1
//     servers at once crashed or recovering): after restarts and leader
//     kills under a load of creates, every serving member holds every
//     acknowledged create at each checkpoint, and at the end every
//     server's zk_znode_count equals the baseline plus the creates that
//     happened, which include every acknowledged one.
//
// A create that failed with a connection error is ambiguous: the tests
// give every attempt a unique name and resolve it by reading at the end.
// Nothing asserts on time; every wait has a deadline and every load loop
// is bounded in count and time.
//
//	CORRAL_E2E_TARGET=zookeeper go test -count=1 ./tests/ensemble/ -v
//	go test -count=1 ./tests/ensemble/                 # corral
//	go test ./tests/ensemble/ -ensemble.long           # more rounds, five-server variants
//	CORRAL_E2E_SEED=42 go test ./tests/ensemble/       # replay a fault schedule
package ensemble
