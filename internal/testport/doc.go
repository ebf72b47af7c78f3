// Package testport hands tests free loopback ports that the kernel does
// not hand to anything else meanwhile. Asking the kernel (listen on port
// 0, close, use the number) leaves a window in which the port is back in
// the kernel's ephemeral range, where any outgoing connection on the
// machine, or another test's port-0 listen, may take it before the server
// meant to bind it does. The server package's ensemble tests failed with
// "bind: address already in use" at an ensemble's start in 3 of about 36
// runs; which of those two took the port was not traced. Ports below the
// ephemeral range are never given out by the kernel, so Free picks one of
// those at random, checks that it can bind it, and never returns a port
// twice in one process (0 failures in 12 runs after).
//
// Test packages run as parallel processes, and a port a killed server left
// free until its restart was once handed to another package's server in
// between (tests/rlog's restart then failed to bind). So Free also takes an
// exclusive flock on a per-port file under the temporary directory and
// holds it while the process lives: no two live test processes get the
// same port.
package testport
