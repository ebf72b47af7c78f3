package config

import (
	"fmt"
	"strconv"
)

// validate checks the parsed configuration as QuorumPeerConfig.parseProperties,
// parseDynamicConfig, setupClientPort, setupPeerType and checkValidity do,
// plus what corral needs (a client port, distinct ports on one host).
// withMyID says c.MyID has been read; the checks that need it are skipped
// otherwise.
func (p *parser) validate(withMyID bool) error {
	c := p.c
	if c.DataDir == "" {
		return &KeyError{Key: "dataDir", Missing: true, Reason: "not set"}
	}
	if c.ClientPortAddress != "" && c.ClientPort == 0 {
		return &KeyError{Key: "clientPortAddress", Value: c.ClientPortAddress, Reason: "set but clientPort is not set"}
	}
	if c.MinSessionTimeout > c.MaxSessionTimeout {
		return &KeyError{Key: "minSessionTimeout", Value: strconv.Itoa(c.MinSessionTimeout),
			Reason: fmt.Sprintf("larger than maxSessionTimeout (%d)", c.MaxSessionTimeout)}
	}
	if err := p.validateServers(); err != nil {
		return err
	}
	if c.Distributed() {
		if c.InitLimit == 0 {
			return &KeyError{Key: "initLimit", Missing: true, Reason: "not set (required with more than one server)"}
		}
		if c.SyncLimit == 0 {
			return &KeyError{Key: "syncLimit", Missing: true, Reason: "not set (required with more than one server)"}
		}
	}
	if err := p.validateClientPort(withMyID); err != nil {
		return err
	}
	if err := p.validateTLS(); err != nil {
		return err
	}
	if withMyID {
		return p.validateMyID()
	}
	return nil
}

func (p *parser) validateServers() error {
	c := p.c
	voters := len(c.Voters())
	observers := len(c.Servers) - voters
	switch {
	case voters == 0:
		if !c.StandaloneEnabled {
			return &KeyError{Key: "standaloneEnabled", Value: "false", Reason: "needs at least one participant server.N line"}
		}
		if observers > 0 {
			return fmt.Errorf("observers without participants: %w", ErrInvalid)
		}
	case voters == 1 && c.StandaloneEnabled:
		// ZooKeeper logs "Invalid configuration, only one server specified
		// (ignoring)" and runs standalone.
		if observers > 0 {
			return fmt.Errorf("observers without a quorum (one participant and standaloneEnabled=true): %w", ErrInvalid)
		}
		p.warn("only one server specified; running standalone (set standaloneEnabled=false for a one-server ensemble)")
	case voters <= 2:
		p.warn("%d participants: no server failure will be tolerated; you need at least 3 servers", voters)
	case voters%2 == 0:
		p.warn("%d participants: non-optimal configuration, consider an odd number of servers", voters)
	}

	// Two servers with the same host string are on one machine; their
	// ports must not collide. (ZooKeeper finds out when bind fails.)
	type hostPort struct {
		host string
		port int
	}
	used := make(map[hostPort]string)
	claim := func(host string, port int, what string) error {
		hp := hostPort{host, port}
		if prev, ok := used[hp]; ok {
			return fmt.Errorf("%s and %s both use %s: %w", prev, what,
				bracketHost(host)+":"+strconv.Itoa(port), ErrInvalid)
		}
		used[hp] = what
		return nil
	}
	for _, s := range c.Servers {
		id := strconv.FormatInt(s.ID, 10)
		if err := claim(s.Host, s.QuorumPort, "server."+id+" quorum port"); err != nil {
			return err
		}
		if err := claim(s.Host, s.ElectionPort, "server."+id+" election port"); err != nil {
			return err
		}
		if s.ClientPort != 0 && s.ClientAddr != "" {
			if err := claim(s.ClientAddr, s.ClientPort, "server."+id+" client port"); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateClientPort insists on somewhere to accept clients and, knowing
// our id, on agreement between clientPort(Address) and our server.N line,
// as ZooKeeper's setupClientPort does.
func (p *parser) validateClientPort(withMyID bool) error {
	c := p.c
	if c.ClientPort == 0 && c.SecureClientPort != 0 {
		return nil // TLS clients only, as ZooKeeper allows
	}
	if c.ClientPort != 0 {
		if self := c.Self(); withMyID && self != nil && self.ClientPort != 0 {
			// ZooKeeper: a wildcard clientPortAddress need only agree on
			// the port; any other must equal the line's address, where a
			// port-only client part means 0.0.0.0.
			wild := c.ClientPortAddress == "" || c.ClientPortAddress == "0.0.0.0" || c.ClientPortAddress == "::"
			sameAddr := wild || c.ClientPortAddress == self.ClientAddr
			if c.ClientPort != self.ClientPort || !sameAddr {
				return &KeyError{Key: "clientPort", Value: strconv.Itoa(c.ClientPort),
					Reason: fmt.Sprintf("client address %s differs from server.%d's %s",
						hostPortString(c.ClientPortAddress, c.ClientPort), self.ID,
						hostPortString(self.ClientAddr, self.ClientPort))}
			}
		}
		return nil
	}
	if withMyID {
		if self := c.Self(); self != nil && self.ClientPort != 0 {
			return nil
		}
	} else {
		for _, s := range c.Servers {
			if s.ClientPort != 0 {
				return nil
			}
		}
	}
	return &KeyError{Key: "clientPort", Missing: true, Reason: "not set, and this server's server.N line has no client port"}
}

func (p *parser) validateMyID() error {
	c := p.c
	if c.Distributed() {
		if c.MyID == 0 {
			return fmt.Errorf("myid file is missing from dataDir %s (required with more than one server): %w", c.DataDir, ErrInvalid)
		}
		if c.Self() == nil {
			return fmt.Errorf("myid %d has no server.%d line: %w", c.MyID, c.MyID, ErrInvalid)
		}
	}
	if c.ExtendedTypesEnabled && c.MyID > MaxExtendedTypesServerID {
		return &KeyError{Key: "extendedTypesEnabled", Value: "true",
			Reason: fmt.Sprintf("server id %d is too large; it must be at most %d", c.MyID, MaxExtendedTypesServerID)}
	}
	if p.peerType != "" {
		role := "participant"
		if s := c.Self(); s != nil && s.Observer {
			role = "observer"
		}
		if role != p.peerType {
			p.warn("peerType=%s does not match server.%d (%s); using the server list", p.peerType, c.MyID, role)
		}
	}
	return nil
}
