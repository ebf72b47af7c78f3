// Package rlogsvc is the gRPC service of the replicated logs
// (api/rlog/v1, corral.rlog.v1.Logs) over an rlog.Proposer: a replicated
// rlog.Member, or an unreplicated rlog.Local. Register mounts it on any
// grpc.ServiceRegistrar (the shared API server). Errors map to gRPC
// statuses here, in one place (errors.go).
package rlogsvc
