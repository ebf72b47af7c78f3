// Package loopport picks loopback ports for servers that a command starts
// itself, such as the configuration manager's ensemble of `corral kv
// cluster`, whose members must know each other's ports before any of them
// binds one.
//
// Asking the kernel for a port (listen on port 0, close, use the number)
// leaves a window in which the port is back in the kernel's ephemeral
// range, where any outgoing connection on the machine, or another
// process's port-0 listen, may take it before the server meant to bind it
// does (`corral kv cluster` once failed so under the test suite's parallel
// processes). Pick chooses ports below the ephemeral range instead, which
// the kernel never hands out by itself, and checks that each can be bound.
// Two commands picking at once may still choose the same port; the second
// to bind fails with "address already in use". Tests take their ports
// from internal/testport, which builds on this package and also excludes
// every other test process.
package loopport
