package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/corral-db/corral/config"
)

func TestConsoleMembers(t *testing.T) {
	parse := func(text string, myid int64) *config.Config {
		t.Helper()
		cfg, _, err := config.Parse(strings.NewReader(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MyID = myid
		return cfg
	}
	base := "tickTime=2000\ninitLimit=5\nsyncLimit=2\ndataDir=/d\nclientPort=2181\nadmin.serverPort=9000\n"
	// Members on other hosts: their AdminServer at this server's port.
	cfg := parse(base+"server.1=a:2888:3888\nserver.2=b:2888:3888\nserver.3=c:2888:3888;2200\n", 2)
	servers, ids, admins := consoleMembers(cfg)
	if want := []string{"a:2181", "127.0.0.1:2181", "c:2200"}; !reflect.DeepEqual(servers, want) {
		t.Errorf("servers %v, want %v", servers, want)
	}
	if want := []int64{1, 2, 3}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %v", ids)
	}
	if want := []string{"a:9000", "127.0.0.1:9000", "c:9000"}; !reflect.DeepEqual(admins, want) {
		t.Errorf("admins %v, want %v", admins, want)
	}
	// One host: the others' AdminServers are unknown unless configured.
	one := base + "server.1=127.0.0.1:2888:3888;2181\nserver.2=127.0.0.1:2889:3889;2182\nserver.3=127.0.0.1:2890:3890;2183\n"
	if _, _, admins := consoleMembers(parse(one, 1)); !reflect.DeepEqual(admins, []string{"127.0.0.1:9000", "", ""}) {
		t.Errorf("same host, no adminAddresses: %v", admins)
	}
	_, _, admins = consoleMembers(parse(one+"admin.console.adminAddresses=2=127.0.0.1:9001,3=127.0.0.1:9002\n", 1))
	if want := []string{"127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"}; !reflect.DeepEqual(admins, want) {
		t.Errorf("with adminAddresses: %v, want %v", admins, want)
	}
	// Standalone.
	servers, ids, admins = consoleMembers(parse(base, 0))
	if len(servers) != 1 || ids[0] != 1 || admins[0] != "127.0.0.1:9000" {
		t.Errorf("standalone: %v %v %v", servers, ids, admins)
	}
}
