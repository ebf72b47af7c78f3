package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// runTransferLeader asks the ensemble's leader, through its AdminServer,
// to hand leadership to another voter (the transfer_leadership command),
// and waits until the target leads or the wait runs out.
func runTransferLeader(args []string) int {
	fs := flag.NewFlagSet("transfer-leader", flag.ContinueOnError)
	admin := fs.String("admin", "127.0.0.1:8080", "the leader's AdminServer host:port")
	to := fs.Uint64("to", 0, "the server id (myid) of the voter to lead")
	auth := fs.String("auth", "", "digest credentials user:password (the super user, or one with ADMIN on /)")
	wait := fs.Duration("wait", 10*time.Second, "how long to wait for the target to lead (0: do not wait)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *to == 0 || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: corral transfer-leader -admin HOST:PORT -to ID [-auth user:password] [-wait D]")
		return 2
	}
	base := "http://" + *admin + "/commands"
	req, _ := http.NewRequest(http.MethodPost, base+"/transfer_leadership?to="+url.QueryEscape(strconv.FormatUint(*to, 10)), nil)
	if *auth != "" {
		req.Header.Set("Authorization", "digest "+*auth)
	}
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral:", err)
		return 2
	}
	var m map[string]any
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "corral: transfer refused (%s): %v\n", resp.Status, m["error"])
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral:", err)
		return 2
	}
	fmt.Printf("transfer to server %d started\n", *to)
	if *wait <= 0 {
		return 0
	}
	deadline := time.Now().Add(*wait)
	for time.Now().Before(deadline) {
		if resp, err := cl.Get(base + "/leader"); err == nil {
			var l map[string]any
			json.NewDecoder(resp.Body).Decode(&l)
			resp.Body.Close()
			if id, ok := l["leader_id"].(float64); ok && uint64(id) == *to {
				fmt.Printf("server %d leads\n", *to)
				return 0
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "corral: server %d did not take over within %s\n", *to, *wait)
	return 1
}
