// Package apisrv is the gRPC listener a corral member serves its APIs on
// (the key-value service, later the replicated-log service): one port
// (zoo.cfg apiPort, apiPortAddress), services registered on it before it
// serves, stopped with its context.
package apisrv
