package console

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/console"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/tests/harness"
)

// TestConsole drives the console in headless chromium against a real
// three-member ensemble. The steps share the ensemble and the browser (so
// the whole run stays short) and run in order; the last one kills the
// leader.
func TestConsole(t *testing.T) {
	if env.IsZooKeeper() {
		t.Skip("the console is corral's; its backend works with ZooKeeper too, but the suite starts corral")
	}
	needKazoo(t)
	ctx := newBrowser(t)
	// Every member runs its AdminServer with the console mounted, as
	// corral serves it; each console knows every member's AdminServer, so
	// it can ask the leader for a leadership transfer.
	adminPorts := []int{testport.Free(t), testport.Free(t), testport.Free(t)}
	var known []string
	for i, p := range adminPorts {
		known = append(known, fmt.Sprintf("%d=127.0.0.1:%d", i+1, p))
	}
	ens := env.StartEnsemble(t, 3, harness.EnsembleConfig{TickTime: time.Second, InitLimit: 10, SyncLimit: 5,
		MemberExtra: func(i int) []string {
			return []string{"admin.enableServer=true", "admin.serverAddress=127.0.0.1",
				"admin.serverPort=" + strconv.Itoa(adminPorts[i]),
				"admin.console.writable=true",
				"admin.console.adminAddresses=" + strings.Join(known, ",")}
		}})
	// The page is served by member 1's AdminServer; the transfer step
	// keeps the leadership away from it, so the failover step does not
	// kill the page's own server.
	const pageMember = 0
	url := fmt.Sprintf("http://127.0.0.1:%d/console", adminPorts[pageMember])
	zc := connectZK(t, ens.Addrs(), nil)

	run(t, ctx, chromedp.Navigate(url+"/"))
	waitJS(t, ctx, pageWait, "page ready", `document.body.dataset.ready === "1"`)

	t.Run("browse", func(t *testing.T) { testBrowse(t, ctx, zc) })
	t.Run("paging", func(t *testing.T) { testPaging(t, ctx, ens) })
	t.Run("create-delete", func(t *testing.T) { testCreateDelete(t, ctx, ens) })
	t.Run("noauth", func(t *testing.T) { testNoAuth(t, ctx, ens, zc) })
	t.Run("sessions-watches", func(t *testing.T) { testSessionsWatches(t, ctx, zc) })
	t.Run("metrics", func(t *testing.T) { testMetrics(t, ctx, zc) })
	t.Run("readonly", func(t *testing.T) { testReadOnly(t, ctx, ens, url) })
	t.Run("transfer", func(t *testing.T) { testTransfer(t, ctx, ens, pageMember) })
	t.Run("failover", func(t *testing.T) { testFailover(t, ctx, ens) })
}

// connectZK is a go-zookeeper client of the ensemble with a session.
func connectZK(t *testing.T, addrs []string, auth []string) *zk.Conn {
	t.Helper()
	conn, ev, err := zk.Connect(addrs, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(pageWait)
	for conn.State() != zk.StateHasSession {
		select {
		case <-ev:
		case <-deadline:
			t.Fatal("go-zk: no session")
		}
	}
	if auth != nil {
		if err := conn.AddAuth("digest", []byte(auth[0]+":"+auth[1])); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// quiet drops go-zk's log lines: it logs reconnects from its own
// goroutines, also after the test ends (the failover step kills a member).
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// show navigates the page to a hash route.
func show(t *testing.T, ctx context.Context, hash string) {
	t.Helper()
	js(t, ctx, `location.hash = `+strconv.Quote(hash))
}

// clickJS clicks the element selected by a CSS selector.
func clickJS(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	run(t, ctx, chromedp.Click(chromedp.CSS(sel)))
}

func rowSel(path string) string {
	return `#tree li[data-path="` + path + `"] > .row`
}

func statCell(key string) string {
	return `document.querySelector('#stat-table tr[data-key="` + key + `"] td:nth-child(2)').firstChild.textContent`
}

// testBrowse: a znode written by go-zookeeper is reached by clicking
// through the tree; the page shows its data (pretty JSON, hex) and the
// Stat go-zookeeper reports.
func testBrowse(t *testing.T, ctx context.Context, zc *zk.Conn) {
	data := `{"name":"orders","replicas":[1,2,3]}`
	if _, err := zc.Create("/app", []byte("parent"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Create("/app/config", []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, st, err := zc.Get("/app/config")
	if err != nil {
		t.Fatal(err)
	}
	// The tree was loaded before /app existed: reload the root's children.
	show(t, ctx, "#tree:/")
	js(t, ctx, `refreshItem("/")`)
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS(rowSel("/app"))))
	clickJS(t, ctx, rowSel("/app")+" .name")
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS(rowSel("/app/config"))))
	clickJS(t, ctx, rowSel("/app/config")+" .name")
	waitJS(t, ctx, pageWait, "node /app/config", `document.querySelector("#node").dataset.path === "/app/config" && !document.querySelector("#node").hidden`)

	want := "{\n  \"name\": \"orders\",\n  \"replicas\": [\n    1,\n    2,\n    3\n  ]\n}"
	if got := evalString(t, ctx, `document.querySelector("#data-view").textContent`); got != want {
		t.Errorf("JSON view:\n%s\nwant\n%s", got, want)
	}
	for key, want := range map[string]string{
		"mzxid":          fmt.Sprintf("0x%x", st.Mzxid),
		"czxid":          fmt.Sprintf("0x%x", st.Czxid),
		"version":        strconv.Itoa(int(st.Version)),
		"dataLength":     strconv.Itoa(int(st.DataLength)),
		"ctime":          strconv.FormatInt(st.Ctime, 10),
		"numChildren":    "0",
		"ephemeralOwner": "0x0",
	} {
		if got := evalString(t, ctx, statCell(key)); got != want {
			t.Errorf("Stat %s = %q, want %q (go-zookeeper)", key, got, want)
		}
	}
	if got := evalString(t, ctx, `Array.from(document.querySelectorAll("#acl-table td")).map(e => e.textContent).join(" ")`); got != "world:anyone cdrwa" {
		t.Errorf("ACL = %q", got)
	}
	shot(t, ctx, "tree")

	clickJS(t, ctx, `#data-modes button[data-mode="hex"]`)
	if got := evalString(t, ctx, `document.querySelector("#data-view").textContent`); !strings.HasPrefix(got, "00000000  7b 22 6e 61 6d 65 22 3a ") {
		t.Errorf("hex view starts %q", got[:min(len(got), 60)])
	}
	clickJS(t, ctx, `#data-modes button[data-mode="text"]`)
	if got := evalString(t, ctx, `document.querySelector("#data-view").textContent`); got != data {
		t.Errorf("text view %q, want %q", got, data)
	}
	js(t, ctx, `state.dataMode = null`)
}

// testPaging: a node with many children lists one page of them, with a
// count, and loads the next page on demand.
func testPaging(t *testing.T, ctx context.Context, ens *harness.Ensemble) {
	n := 2000
	if *long {
		n = 100000
	}
	cc, err := client.Connect(context.Background(), ens.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := cc.Create(context.Background(), "/big", nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
		t.Fatal(err)
	}
	// Pipelined creates, a bounded window at a time.
	const window = 1000
	for base := 0; base < n; base += window {
		var futs []*client.Future[string]
		for i := base; i < min(base+window, n); i++ {
			futs = append(futs, cc.CreateAsync(fmt.Sprintf("/big/item-%06d", i), nil, client.WorldACL(client.PermAll), client.ModePersistent))
		}
		for _, f := range futs {
			if _, err := f.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	js(t, ctx, `refreshItem("/")`)
	show(t, ctx, "#tree:/big")
	waitJS(t, ctx, pageWait, "first page of /big", `document.querySelectorAll('#tree li[data-path="/big"] > ul > li[data-path]').length === 500`)
	if got := evalString(t, ctx, `document.querySelector('#tree li[data-path="/big"] > .row .count').textContent`); got != fmt.Sprintf("%s", commas(n)) {
		t.Errorf("count shown %q, want %s", got, commas(n))
	}
	if got := evalString(t, ctx, `document.querySelector('#tree li[data-path="/big"] > ul > li.more').textContent`); !strings.Contains(got, "500 of "+commas(n)) {
		t.Errorf("more row %q", got)
	}
	clickJS(t, ctx, `#tree li[data-path="/big"] > ul > li.more button`)
	waitJS(t, ctx, pageWait, "second page of /big", `document.querySelectorAll('#tree li[data-path="/big"] > ul > li[data-path]').length === 1000`)
	last := evalString(t, ctx, `Array.from(document.querySelectorAll('#tree li[data-path="/big"] > ul > li[data-path]')).pop().dataset.path`)
	if last != "/big/item-000999" {
		t.Errorf("last child after two pages = %s, want /big/item-000999", last)
	}
	// Collapse it again so later screenshots show a short tree.
	clickJS(t, ctx, rowSel("/big")+" .twisty")
}

func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// testCreateDelete: a znode created through the page is seen by kazoo,
// and gone for kazoo after the page deletes it. Both need confirmation.
func testCreateDelete(t *testing.T, ctx context.Context, ens *harness.Ensemble) {
	show(t, ctx, "#tree:/app")
	waitJS(t, ctx, pageWait, "node /app", `document.querySelector("#node").dataset.path === "/app"`)
	clickJS(t, ctx, "#btn-create")
	run(t, ctx,
		chromedp.WaitVisible(chromedp.CSS("#create-name")),
		chromedp.SendKeys(chromedp.CSS("#create-name"), "made-by-console"),
		chromedp.SendKeys(chromedp.CSS("#create-data"), "hello from the browser"))
	shot(t, ctx, "create")
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "confirmation", `!document.querySelector("#modal-confirm").hidden`)
	if got := evalString(t, ctx, `document.querySelector("#modal-confirm").textContent`); !strings.Contains(got, "/app/made-by-console") {
		t.Errorf("confirmation says %q", got)
	}
	if got := kazoo(t, ens.ConnectString(), "get", "/app/made-by-console"); got != "absent" {
		t.Fatalf("before confirming, kazoo sees %q", got)
	}
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "created node selected", `document.querySelector("#node").dataset.path === "/app/made-by-console"`)
	if got := kazoo(t, ens.ConnectString(), "get", "/app/made-by-console"); got != "present hello from the browser" {
		t.Fatalf("kazoo after create: %q", got)
	}

	clickJS(t, ctx, "#btn-delete")
	waitJS(t, ctx, pageWait, "delete confirmation", `document.querySelector("#modal").open && !document.querySelector("#modal-confirm").hidden`)
	shot(t, ctx, "delete")
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "parent selected after delete", `document.querySelector("#node").dataset.path === "/app"`)
	if got := kazoo(t, ens.ConnectString(), "get", "/app/made-by-console"); got != "absent" {
		t.Fatalf("kazoo after delete: %q", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll('#tree li[data-path="/app/made-by-console"]').length)`); n != "0" {
		t.Errorf("deleted node still in the tree")
	}
}

// testNoAuth: a write the ACL does not allow is refused by the server and
// the page shows NOAUTH; with the right digest credentials it succeeds.
func testNoAuth(t *testing.T, ctx context.Context, ens *harness.Ensemble, zc *zk.Conn) {
	owner := connectZK(t, ens.Addrs(), []string{"alice", "secret"})
	acl := append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	if _, err := owner.Create("/locked", []byte("v1"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create("/vault", []byte("secret data"), 0, zk.DigestACL(zk.PermAll, "alice", "secret")); err != nil {
		t.Fatal(err)
	}

	// Anonymous: reading /vault is refused, its Stat still shows.
	show(t, ctx, "#tree:/vault")
	waitJS(t, ctx, pageWait, "node /vault", `document.querySelector("#node").dataset.path === "/vault"`)
	if got := evalString(t, ctx, `document.querySelector("#data-view").textContent`); !strings.Contains(got, "NOAUTH") {
		t.Errorf("anonymous read of /vault shows %q, want NOAUTH", got)
	}

	// Anonymous write to /locked: the page shows the server's NOAUTH.
	show(t, ctx, "#tree:/locked")
	waitJS(t, ctx, pageWait, "node /locked", `document.querySelector("#node").dataset.path === "/locked"`)
	clickJS(t, ctx, "#btn-set")
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS("#set-data")), chromedp.SetValue(chromedp.CSS("#set-data"), "v2 by anonymous"))
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "confirmation", `!document.querySelector("#modal-confirm").hidden`)
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "NOAUTH banner", `document.querySelector("#error").dataset.code === "NOAUTH" && !document.querySelector("#error").hidden`)
	shot(t, ctx, "noauth")
	if d, _, err := zc.Get("/locked"); err != nil || string(d) != "v1" {
		t.Fatalf("after the refused write go-zk reads %q, %v", d, err)
	}

	// Sign in as alice: the same write goes through.
	clickJS(t, ctx, "#cred-button")
	run(t, ctx,
		chromedp.WaitVisible(chromedp.CSS("#cred-user")),
		chromedp.SendKeys(chromedp.CSS("#cred-user"), "alice"),
		chromedp.SendKeys(chromedp.CSS("#cred-password"), "secret"))
	shot(t, ctx, "credentials")
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "identity", `document.querySelector("#identity").textContent.includes("digest:alice")`)
	show(t, ctx, "#tree:/vault")
	waitJS(t, ctx, pageWait, "vault readable", `document.querySelector("#node").dataset.path === "/vault" && document.querySelector("#data-view").textContent === "secret data"`)
	show(t, ctx, "#tree:/locked")
	waitJS(t, ctx, pageWait, "node /locked", `document.querySelector("#node").dataset.path === "/locked"`)
	clickJS(t, ctx, "#btn-set")
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS("#set-data")), chromedp.SetValue(chromedp.CSS("#set-data"), "v2 by alice"))
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "confirmation", `!document.querySelector("#modal-confirm").hidden`)
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "saved", `document.querySelector("#data-view").textContent === "v2 by alice"`)
	if _, err := zc.Sync("/locked"); err != nil {
		t.Fatal(err)
	}
	if d, _, err := zc.Get("/locked"); err != nil || string(d) != "v2 by alice" {
		t.Fatalf("go-zk reads %q, %v after alice's write", d, err)
	}

	// Sign out again for the later steps.
	js(t, ctx, `(sessionStorage.clear(), afterCredentials())`)
	waitJS(t, ctx, pageWait, "anonymous", `document.querySelector("#identity").textContent.startsWith("anonymous")`)
}

// testSessionsWatches: go-zookeeper's session and its watch show up in
// the sessions and watches views.
func testSessionsWatches(t *testing.T, ctx context.Context, zc *zk.Conn) {
	if _, _, _, err := zc.GetW("/app/config"); err != nil {
		t.Fatal(err)
	}
	sid := fmt.Sprintf("0x%x", zc.SessionID())
	show(t, ctx, "#sessions")
	waitJS(t, ctx, pageWait, "go-zk's session", `document.querySelector('#sessions-table tr[data-session="`+sid+`"]')`)
	shot(t, ctx, "sessions")
	show(t, ctx, "#watches")
	waitJS(t, ctx, pageWait, "go-zk's watch", `(document.querySelector('#watches-table tr[data-session="`+sid+`"] td.paths') || {}).textContent === "/app/config"`)
	shot(t, ctx, "watches")
}

// testMetrics: the charts fill with samples and redraw as new ones come.
func testMetrics(t *testing.T, ctx context.Context, zc *zk.Conn) {
	show(t, ctx, "#metrics")
	waitJS(t, ctx, pageWait, "two samples", `Number(document.querySelector("#chart-znodes").dataset.samples) >= 2`)
	before := evalString(t, ctx, `document.querySelector("#chart-znodes").toDataURL()`)
	n0 := evalString(t, ctx, `document.querySelector("#chart-znodes").dataset.samples`)
	// Load, so requests/s and the znode count move.
	for i := 0; i < 200; i++ {
		if _, err := zc.Create(fmt.Sprintf("/app/load-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	waitJS(t, ctx, pageWait, "more samples", `Number(document.querySelector("#chart-znodes").dataset.samples) > `+n0+` + 2`)
	after := evalString(t, ctx, `document.querySelector("#chart-znodes").toDataURL()`)
	if before == after {
		t.Error("the znode chart did not change after 200 creates and new samples")
	}
	// The members report latency percentiles (mntr's p50_/p99_ lines);
	// after the creates, some sample carries an update p99.
	waitJS(t, ctx, pageWait, "update latency percentiles",
		`metrics.samples.some((s) => s.points.some((p) => p.up && typeof p.updateP99 === "number" && typeof p.readP50 === "number"))`)
	if *screenshots != "" {
		// Some seconds of steady load so the picture shows lines, not
		// dots. Bounded in time and count.
		end := time.Now().Add(12 * time.Second)
		for i := 0; i < 20000 && time.Now().Before(end); i++ {
			if _, err := zc.Set("/app/load-0", []byte(strconv.Itoa(i)), -1); err != nil {
				t.Fatal(err)
			}
			if i%50 == 0 {
				zc.Create(fmt.Sprintf("/app/more-%d", i), nil, 0, zk.WorldACL(zk.PermAll))
			}
		}
	}
	shot(t, ctx, "metrics")
}

// testFailover: the ensemble view shows one leader; after the leader is
// killed (SIGKILL), it shows that member down and another as leader.
func testFailover(t *testing.T, ctx context.Context, ens *harness.Ensemble) {
	show(t, ctx, "#ensemble")
	waitJS(t, ctx, pageWait, "a leader and two followers",
		`document.querySelectorAll('#members .card[data-mode="leader"]').length === 1 && document.querySelectorAll('#members .card[data-mode="follower"]').length === 2`)
	// Every member's last snapshot (from its AdminServer: a fresh
	// ensemble may have none yet, which the AdminServer says) and
	// elections (from mntr), and the leader's election time.
	dd := func(card, name string) string {
		return `([...document.querySelectorAll('#members .card` + card + ` dt')].find((d) => d.textContent === "` + name + `") || {nextSibling: {textContent: ""}}).nextSibling.textContent`
	}
	for i := 1; i <= 3; i++ {
		card := `[data-id="` + strconv.Itoa(i) + `"]`
		waitJS(t, ctx, pageWait, "member "+strconv.Itoa(i)+"'s last snapshot and elections",
			`/^(0x[0-9a-f]+ · \d{4}-\d\d-\d\d |none yet$)/.test(`+dd(card, "last snapshot")+`) && /^[1-9]\d* · avg \d+ ms, max \d+ ms$/.test(`+dd(card, "elections")+`)`)
	}
	waitJS(t, ctx, pageWait, "the leader's election time", `/^\d{4}-\d\d-\d\d /.test(`+dd(`[data-mode="leader"]`, "leader since")+`)`)
	shot(t, ctx, "ensemble")
	id := evalString(t, ctx, `document.querySelector('#members .card[data-mode="leader"]').dataset.id`)
	leader, err := strconv.Atoi(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := ens.Leader(); got != leader-1 {
		t.Fatalf("page shows server %d as leader, srvr says index %d", leader, got)
	}
	ens.Server(leader - 1).Kill()
	waitJS(t, ctx, failoverWait, "old leader down, a new leader",
		`document.querySelector('#members .card[data-id="`+id+`"]').dataset.mode === "down" && document.querySelectorAll('#members .card[data-mode="leader"]').length === 1`)
	shot(t, ctx, "ensemble-failover")
}

// testReadOnly: a console without Writable shows it and offers no
// writes (the API refusing them is console's unit test).
func testReadOnly(t *testing.T, ctx context.Context, ens *harness.Ensemble, writableURL string) {
	roURL, _ := serveConsole(t, console.Config{Servers: ens.Addrs()})
	run(t, ctx, chromedp.Navigate(roURL+"/#tree:/app/config"))
	waitJS(t, ctx, pageWait, "read-only page", `document.body.dataset.ready === "1" && document.querySelector("#node").dataset.path === "/app/config"`)
	if got := evalString(t, ctx, `document.querySelector("#mode-badge").textContent`); got != "read-only" {
		t.Errorf("badge %q", got)
	}
	for _, b := range []string{"#btn-create", "#btn-set", "#btn-delete"} {
		if got := evalString(t, ctx, `String(document.querySelector("`+b+`").disabled)`); got != "true" {
			t.Errorf("%s enabled on a read-only console", b)
		}
	}
	run(t, ctx, chromedp.Navigate(writableURL+"/"))
	waitJS(t, ctx, pageWait, "page ready", `document.body.dataset.ready === "1"`)
}

// testTransfer: as the super user, "Make leader" on a follower (not the
// member serving the page), confirmed, makes that member lead: the page
// and srvr agree. Anonymous, the button's request is refused.
func testTransfer(t *testing.T, ctx context.Context, ens *harness.Ensemble, pageMember int) {
	show(t, ctx, "#ensemble")
	waitJS(t, ctx, pageWait, "a leader and two followers",
		`document.querySelectorAll('#members .card[data-mode="leader"]').length === 1 && document.querySelectorAll('#members .card[data-mode="follower"]').length === 2`)
	leader := ens.Leader()
	target := -1
	for _, f := range ens.Followers(leader) {
		if f != pageMember {
			target = f
			break
		}
	}
	if target < 0 {
		t.Fatalf("no follower other than member %d", pageMember+1)
	}
	btn := `#members .card[data-id="` + strconv.Itoa(target+1) + `"] button.make-leader`
	if got := evalString(t, ctx, `String(document.querySelectorAll('#members .card[data-mode="leader"] button.make-leader').length)`); got != "0" {
		t.Errorf("the leader's card offers make-leader")
	}

	// Anonymous: confirmed, then refused; the leader stays.
	clickJS(t, ctx, btn)
	waitJS(t, ctx, pageWait, "transfer confirmation", `document.querySelector("#modal").open && !document.querySelector("#modal-confirm").hidden`)
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "NOAUTH banner", `document.querySelector("#error").dataset.code === "NOAUTH" && !document.querySelector("#error").hidden`)
	if got := ens.Leader(); got != leader {
		t.Fatalf("an anonymous transfer moved the leadership from %d to %d", leader+1, got+1)
	}
	js(t, ctx, `clearError()`)

	// As the super user.
	clickJS(t, ctx, "#cred-button")
	run(t, ctx,
		chromedp.WaitVisible(chromedp.CSS("#cred-user")),
		chromedp.SendKeys(chromedp.CSS("#cred-user"), harness.SuperUser),
		chromedp.SendKeys(chromedp.CSS("#cred-password"), harness.SuperPassword))
	clickJS(t, ctx, "#modal-ok")
	waitJS(t, ctx, pageWait, "identity", `document.querySelector("#identity").textContent.includes("super")`)
	show(t, ctx, "#ensemble")
	waitJS(t, ctx, pageWait, "make-leader button", `document.querySelector('`+btn+`') && !document.querySelector('`+btn+`').disabled`)
	clickJS(t, ctx, btn)
	waitJS(t, ctx, pageWait, "transfer confirmation", `document.querySelector("#modal").open && !document.querySelector("#modal-confirm").hidden`)
	if got := evalString(t, ctx, `document.querySelector("#modal-confirm").textContent`); !strings.Contains(got, fmt.Sprintf("to server %d", ens.ID(target))) {
		t.Errorf("confirmation says %q", got)
	}
	shot(t, ctx, "transfer")
	if got := ens.Leader(); got != leader {
		t.Fatalf("before confirming, member %d leads", got+1)
	}
	clickJS(t, ctx, "#modal-ok")
	sel := `#members .card[data-id="` + strconv.Itoa(target+1) + `"]`
	waitJS(t, ctx, failoverWait, "the chosen member leads",
		`document.querySelector('`+sel+`').dataset.mode === "leader" && document.querySelectorAll('#members .card[data-mode="leader"]').length === 1`)
	if got := ens.Leader(); got != target {
		t.Errorf("page shows member %d leading, srvr says %d", target+1, got+1)
	}
	// Sign out again for the later steps.
	js(t, ctx, `(sessionStorage.clear(), afterCredentials())`)
	waitJS(t, ctx, pageWait, "anonymous", `document.querySelector("#identity").textContent.startsWith("anonymous")`)
}
