package main

import (
	"os"
	"path/filepath"

	"github.com/corral-db/corral/config"
)

// auditLogPath is where the audit log goes when audit.enable is set ("" if
// not): audit.logFile, else zookeeper_audit.log in $ZOO_LOG_DIR (where
// zkServer.sh puts ZooKeeper's, through zookeeper.log.dir), else in the
// dataDir.
func auditLogPath(cfg *config.Config) string {
	switch {
	case !cfg.AuditEnable:
		return ""
	case cfg.AuditLogFile != "":
		return cfg.AuditLogFile
	case os.Getenv("ZOO_LOG_DIR") != "":
		return filepath.Join(os.Getenv("ZOO_LOG_DIR"), "zookeeper_audit.log")
	}
	return filepath.Join(cfg.DataDir, "zookeeper_audit.log")
}
