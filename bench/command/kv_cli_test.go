package command

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestKVCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-workload", "Z"},
		{"-systems", "redis"},
		{"-leader-policy", "hottest"},
		{"-server-opt", "novalue"},
		{"-durability", "fast"},
		{"-durability", "sync,fast"},
		{"-compaction-sample", "1ms"},
		{"-threads", "0"},
		{"-members", "8"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		code := Command(context.Background(), append([]string{"kv"}, args...), CommandEnv{Stderr: &stderr})
		if code != 2 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	var out bytes.Buffer
	if code := Command(context.Background(), []string{"help"}, CommandEnv{Stdout: &out}); code != 0 || !strings.Contains(out.String(), "corral bench kv") {
		t.Errorf("help: exit %d, lacks kv:\n%s", code, out.String())
	}
}

func TestKVOutageCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-members", "2"},
		{"-records", "0"},
		{"-kills", "0"},
		{"-low", "1.5"},
		{"-durability", "fast"},
		{"-after", "0s"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		code := Command(context.Background(), append([]string{"kv-outage"}, args...), CommandEnv{Stderr: &stderr})
		if code != 2 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
