package command

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRlogCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-sizes", "1k"},
		{"-sizes", "0"},
		{"-latency", ""},
		{"-quorums", "1,x"},
		{"-durability", "diskless"},
		{"-memory-durability", "sync"},
		{"-outstanding", "0"},
		{"-grow-samples", "1"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		code := Command(context.Background(), append([]string{"rlog"}, args...), CommandEnv{Stderr: &stderr})
		if code != 2 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	var out bytes.Buffer
	if code := Command(context.Background(), []string{"help"}, CommandEnv{Stdout: &out}); code != 0 || !strings.Contains(out.String(), "corral bench rlog") {
		t.Errorf("help: exit %d, lacks rlog:\n%s", code, out.String())
	}
}
