// Package testport hands tests free loopback ports that nothing else on
// the machine is handed meanwhile. Asking the kernel (listen on port 0,
// close, use the number) leaves a window in which the port goes back to
// the kernel's ephemeral range: any outgoing connection on the machine —
// a server's peer dialing a member that has not bound yet — may take it
// as its source port, and the server that was meant to bind it fails with
// "address already in use" (the server tests saw that in 2 runs of 11).
// Ports below the ephemeral range are never taken that way, so Free picks
// one of those at random, checks that it can bind it, and never returns a
// port twice in one process.
package testport
