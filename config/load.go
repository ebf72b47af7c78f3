package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
)

// MyIDFile is the name of the file in dataDir holding the server's id.
const MyIDFile = "myid"

// Load reads the zoo.cfg at path as ZooKeeper's QuorumPeerConfig.parse
// does: relative dataDir and dataLogDir are made absolute against the
// process's working directory (java.io.File semantics), dataDir/myid is
// read if it is a regular file, and the whole configuration is validated,
// including the checks that need the server id. A missing myid is fine for
// a standalone server; a malformed one is an error. Warnings are returned
// and logged as by Parse.
func Load(path string, logger *slog.Logger) (*Config, []string, error) {
	p := newParser(logger, os.ReadFile)
	c, err := p.load(path)
	if err != nil {
		return nil, p.warnings, fmt.Errorf("config: %s: %w", path, err)
	}
	return c, p.warnings, nil
}

func (p *parser) load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := p.parseNoValidate(f); err != nil {
		return nil, err
	}
	c := p.c
	for _, dir := range []*string{&c.DataDir, &c.DataLogDir} {
		if *dir != "" {
			abs, err := filepath.Abs(*dir)
			if err != nil {
				return nil, err
			}
			*dir = abs
		}
	}
	if c.DataDir != "" {
		id, err := readMyID(filepath.Join(c.DataDir, MyIDFile))
		if err != nil {
			return nil, err
		}
		c.MyID = id
	}
	if err := p.validate(true); err != nil {
		return nil, err
	}
	if c.DynamicConfigFile != "" {
		if err := readNextDynamicConfig(c, path); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// readNextDynamicConfig reads <static>.dynamic.next, the configuration
// this member accepted in a reconfig proposal and had not seen committed
// when it stopped, as ZooKeeper 3.9's QuorumPeerConfig.parse does when a
// dynamicConfigFile is set (its lastSeenQuorumVerifier). Only a file
// newer than the committed configuration counts.
func readNextDynamicConfig(c *Config, staticPath string) error {
	name := NextDynamicFileName(staticPath)
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	servers, version, _, err := ParseDynamic(string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if version > c.ConfigVersion {
		c.NextServers, c.NextConfigVersion = servers, version
	}
	return nil
}

// readMyID reads a myid file as QuorumPeerConfig.setupMyId does: absent
// (or not a regular file) is id 0; otherwise the first line, with no
// trimming, must be a decimal number. We also require 1..MaxServerID.
func readMyID(path string) (int64, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.Mode().IsRegular()) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// A longer first line is malformed whatever follows.
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, err
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		data = data[:i]
	}
	id, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("myid file %s: %q is not a number: %w", path, data, ErrInvalid)
	}
	if id < 1 || id > MaxServerID {
		return 0, fmt.Errorf("myid file %s: %d is out of range 1-%d: %w", path, id, MaxServerID, ErrInvalid)
	}
	return id, nil
}

// WriteMyID creates c.DataDir if need be and writes c.MyID to its myid
// file, for harnesses that build an ensemble from LocalEnsemble.
func (c *Config) WriteMyID() error {
	if c.DataDir == "" || c.MyID == 0 {
		return fmt.Errorf("config: WriteMyID needs dataDir and MyID: %w", ErrInvalid)
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.DataDir, MyIDFile), []byte(strconv.FormatInt(c.MyID, 10)+"\n"), 0o644)
}
