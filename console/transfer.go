package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
)

// transferRequest is the body of POST api/transfer: the member (position
// in Config.Servers, from 1) that is to lead.
type transferRequest struct {
	To int `json:"to"`
}

// handleTransfer: POST api/transfer asks the current leader's AdminServer
// to hand leadership to another member (corral's transfer_leadership
// command), with the user's credentials as the command's digest
// Authorization: the AdminServer, not the console, decides whether they
// may. It answers once the transfer has started; the ensemble page shows
// the new roles when it completes.
func (c *Console) handleTransfer(cl *call) (any, error) {
	var req transferRequest
	if err := decodeBody(cl.r, &req); err != nil {
		return nil, err
	}
	n := len(c.cfg.Servers)
	if req.To < 1 || req.To > n {
		return nil, badRequest("to must be a member 1.." + strconv.Itoa(n))
	}
	if cl.creds.anonymous() {
		return nil, &apiError{Status: http.StatusForbidden, Code: "NOAUTH",
			Message: "leadership transfer needs credentials the AdminServer accepts (sign in)"}
	}
	leader := c.findLeader(cl)
	switch {
	case leader < 0:
		return nil, &apiError{Status: http.StatusConflict, Code: "NOLEADER", Message: "no member leads right now"}
	case leader == req.To-1:
		return nil, &apiError{Status: http.StatusConflict, Code: "ISLEADER",
			Message: "server " + strconv.FormatInt(c.cfg.IDs[leader], 10) + " already leads"}
	case c.cfg.AdminAddrs[leader] == "":
		return nil, &apiError{Status: http.StatusConflict, Code: "NOADMIN",
			Message: "the AdminServer address of the leader (server " + strconv.FormatInt(c.cfg.IDs[leader], 10) + ") is not known to this console"}
	}
	to := c.cfg.IDs[req.To-1]
	u := "http://" + c.cfg.AdminAddrs[leader] + "/commands/transfer_leadership?to=" + url.QueryEscape(strconv.FormatInt(to, 10))
	hreq, err := http.NewRequestWithContext(cl.ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Authorization", "digest "+cl.creds.user+":"+cl.creds.password)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return nil, &apiError{Status: http.StatusBadGateway, Code: "UNREACHABLE",
			Message: "the leader's AdminServer did not answer: " + err.Error()}
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	msg, _ := body["error"].(string)
	if msg == "" {
		msg = resp.Status
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return map[string]any{"from": c.cfg.IDs[leader], "to": to}, nil
	case http.StatusUnauthorized:
		return nil, &apiError{Status: http.StatusForbidden, Code: "AUTHFAILED", Message: "AdminServer: " + msg}
	case http.StatusForbidden:
		return nil, &apiError{Status: http.StatusForbidden, Code: "NOAUTH", Message: "AdminServer: " + msg}
	case http.StatusConflict:
		// The leader changed between srvr and the command.
		return nil, &apiError{Status: http.StatusConflict, Code: "NOTLEADER", Message: "AdminServer: " + msg}
	case http.StatusBadRequest:
		return nil, &apiError{Status: http.StatusBadRequest, Code: "BADTARGET", Message: "AdminServer: " + msg}
	}
	return nil, &apiError{Status: http.StatusBadGateway, Code: "ADMIN" + strconv.Itoa(resp.StatusCode), Message: "AdminServer: " + msg}
}

// findLeader asks every member for srvr, in parallel, and returns the
// index of the one that leads, or -1.
func (c *Console) findLeader(cl *call) int {
	modes := make([]string, len(c.cfg.Servers))
	var wg sync.WaitGroup
	for i, addr := range c.cfg.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := fourLetter(cl.ctx, addr, "srvr")
			if err != nil {
				return
			}
			if s, err := parseSrvr(text); err == nil {
				modes[i] = s.Mode
			}
		}()
	}
	wg.Wait()
	for i, m := range modes {
		if m == "leader" {
			return i
		}
	}
	return -1
}
