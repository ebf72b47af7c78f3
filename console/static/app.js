// corral console front end: plain JavaScript, no library, no build step.
// Every call goes to the JSON API under api/ (relative, so the page works
// under any mount point); the server does the ZooKeeper work with the
// user's credentials.
"use strict";

const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

// el builds an element: el("td", {class: "mono"}, "text", child, ...).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) {
    if (k === undefined || k === null) continue;
    e.append(k instanceof Node ? k : String(k));
  }
  return e;
}

// ---------- API ----------

const AUTH_KEY = "corral.console.auth";

class APIError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

async function api(method, path, body) {
  const headers = { "X-Console": "1" };
  const auth = sessionStorage.getItem(AUTH_KEY);
  if (auth) headers["X-Console-Auth"] = auth;
  const opts = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch("api/" + path, opts);
  } catch (e) {
    throw new APIError("UNREACHABLE", "the console server did not answer: " + e.message);
  }
  let data = null;
  try { data = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) {
    const err = (data && data.error) || { code: "HTTP" + resp.status, message: resp.statusText };
    throw new APIError(err.code, err.message);
  }
  return data;
}

function showError(e) {
  const code = e.code || "ERROR";
  $("#error-code").textContent = code;
  $("#error-text").textContent = e.message || String(e);
  $("#error").dataset.code = code;
  $("#error").hidden = false;
  $("#notice").hidden = true;
}

function clearError() {
  $("#error").hidden = true;
  delete $("#error").dataset.code;
}

let noticeTimer = 0;
function notice(text) {
  clearError();
  const n = $("#notice");
  n.textContent = text;
  n.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { n.hidden = true; }, 5000);
}

// ---------- encoding helpers ----------

function b64ToBytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function bytesToB64(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

const utf8 = new TextEncoder();

function decodeText(bytes) {
  try { return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), ok: true }; }
  catch (e) { return { text: new TextDecoder("utf-8").decode(bytes), ok: false }; }
}

const HEX_LIMIT = 64 * 1024;

function hexdump(bytes) {
  const n = Math.min(bytes.length, HEX_LIMIT);
  const lines = [];
  for (let off = 0; off < n; off += 16) {
    const row = bytes.subarray(off, Math.min(off + 16, n));
    let hex = "", asc = "";
    for (let i = 0; i < 16; i++) {
      if (i < row.length) {
        hex += row[i].toString(16).padStart(2, "0") + " ";
        asc += row[i] >= 0x20 && row[i] < 0x7f ? String.fromCharCode(row[i]) : ".";
      } else {
        hex += "   ";
      }
      if (i === 7) hex += " ";
    }
    lines.push(off.toString(16).padStart(8, "0") + "  " + hex + " |" + asc + "|");
  }
  if (bytes.length > n) lines.push("… " + (bytes.length - n) + " more bytes");
  return lines.join("\n");
}

function fmtTime(ms) {
  if (!ms) return "—";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

function fmtDuration(ms) {
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d) return d + "d " + h + "h";
  if (h) return h + "h " + m + "m";
  if (m) return s ? m + "m " + s + "s" : m + "m";
  return s + "s";
}

function fmtNum(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  if (digits !== undefined) return v.toFixed(digits);
  return Math.abs(v) >= 1e4 ? v.toLocaleString("en-US") : String(Math.round(v * 100) / 100);
}

function plural(n, one, many) {
  return n + " " + (n === 1 ? one : many || one + "s");
}

function joinPath(parent, name) { return parent === "/" ? "/" + name : parent + "/" + name; }
function parentOf(path) {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

// ---------- state ----------

const state = {
  info: null,
  view: "tree",
  selected: null,   // path of the selected znode
  node: null,       // its api/node answer
  dataMode: null,   // text, json, hex; null picks one per node
  pollTimer: 0,
};

// ---------- credentials ----------

async function refreshIdentity() {
  const who = $("#identity");
  try {
    const r = await api("GET", "whoami");
    const ids = r.identities.map((i) => i.scheme + ":" + i.id);
    who.textContent = r.user ? ids.join(", ") || r.user : "anonymous (" + (ids.join(", ") || "no identity") + ")";
    who.dataset.user = r.user || "";
  } catch (e) {
    who.textContent = "no session";
    showError(e);
  }
}

function credentialsDialog() {
  const signedIn = !!sessionStorage.getItem(AUTH_KEY);
  const user = el("input", { id: "cred-user", type: "text", autocomplete: "username", spellcheck: "false" });
  const pass = el("input", { id: "cred-password", type: "password", autocomplete: "current-password" });
  const body = [
    el("label", {}, "User (digest scheme; the super user is “super”)", user),
    el("label", {}, "Password", pass),
    el("div", { class: "hint" }, "Sent with every request of this tab to the console, which authenticates its ZooKeeper session with it; kept in this tab's session storage only."),
  ];
  const extra = signedIn
    ? el("button", { id: "cred-signout", type: "button", onclick: () => { sessionStorage.removeItem(AUTH_KEY); closeModal(); afterCredentials(); } }, "Sign out")
    : null;
  openModal({
    title: "Credentials",
    body: extra ? [...body, extra] : body,
    ok: "Sign in",
    onOK: async () => {
      if (!user.value) throw new APIError("BADREQUEST", "a user is required");
      sessionStorage.setItem(AUTH_KEY, bytesToB64(utf8.encode(user.value + ":" + pass.value)));
      await afterCredentials();
    },
  });
  user.focus();
}

async function afterCredentials() {
  clearError();
  await refreshIdentity();
  if (state.view === "tree" && state.selected) await selectNode(state.selected);
}

// ---------- modal ----------

let modalState = null;

// openModal shows a form; OK first shows opts.confirm (if given) as a
// confirmation step, then runs opts.onOK. An error keeps the dialog open
// and shows the error banner.
function openModal(opts) {
  modalState = { opts, confirming: false };
  $("#modal-title").textContent = opts.title;
  const body = $("#modal-body");
  body.replaceChildren(...(opts.body || []));
  body.hidden = false;
  $("#modal-confirm").hidden = true;
  $("#modal-ok").textContent = opts.ok || "OK";
  $("#modal-ok").className = opts.danger ? "primary danger" : "primary";
  if (!opts.body || opts.body.length === 0) showConfirm();
  $("#modal").showModal();
}

function showConfirm() {
  const c = modalState.opts.confirm;
  const box = $("#modal-confirm");
  box.replaceChildren(...(typeof c === "function" ? c() : c));
  box.hidden = false;
  $("#modal-body").hidden = true;
  modalState.confirming = true;
  $("#modal-ok").textContent = "Confirm";
  $("#modal-ok").id = "modal-ok";
}

function closeModal() {
  modalState = null;
  if ($("#modal").open) $("#modal").close();
}

async function modalSubmit(ev) {
  ev.preventDefault();
  if (!modalState) return;
  const opts = modalState.opts;
  try {
    if (opts.validate) opts.validate();
    if (opts.confirm && !modalState.confirming) { showConfirm(); return; }
    $("#modal-ok").disabled = true;
    await opts.onOK();
    closeModal();
  } catch (e) {
    closeModal();
    showError(e);
  } finally {
    $("#modal-ok").disabled = false;
  }
}

// ---------- tree ----------

function treeItem(parent, child) {
  const path = joinPath(parent, child.name);
  const li = el("li", { "data-path": path });
  const hasKids = child.numChildren > 0;
  const row = el("div", { class: "row", title: path },
    el("span", { class: "twisty" }, hasKids ? "▸" : ""),
    el("span", { class: "name" }, child.name),
    child.ephemeral ? el("span", { class: "eph", title: "ephemeral" }, "eph") : null,
    child.refused ? el("span", { class: "eph", title: "its ACL refuses READ to these credentials" }, "no read") : null,
    hasKids ? el("span", { class: "count" }, child.numChildren.toLocaleString("en-US")) : null);
  li.append(row);
  row.addEventListener("click", (ev) => {
    if (ev.target.classList.contains("twisty")) { toggle(li); return; }
    location.hash = "#tree:" + path;
    if (hasKids && !li.classList.contains("open")) toggle(li);
  });
  li.dataset.children = child.numChildren;
  return li;
}

async function toggle(li) {
  const open = li.classList.toggle("open");
  const tw = $(".twisty", li);
  if (tw && tw.textContent) tw.textContent = open ? "▾" : "▸";
  let ul = li.querySelector(":scope > ul");
  if (!open) { if (ul) ul.hidden = true; return; }
  if (ul) { ul.hidden = false; return; }
  ul = el("ul");
  li.append(ul);
  await loadChildren(li.dataset.path, ul, "");
}

// loadChildren appends one page of path's children to ul, with a "more"
// button when the node has more than a page.
async function loadChildren(path, ul, after) {
  const more = ul.querySelector(":scope > li.more");
  if (more) more.remove();
  let r;
  try {
    r = await api("GET", "children?path=" + encodeURIComponent(path) + (after ? "&after=" + encodeURIComponent(after) : ""));
  } catch (e) {
    showError(e);
    return;
  }
  const frag = document.createDocumentFragment();
  for (const c of r.children) if (!c.gone) frag.append(treeItem(path, c));
  ul.append(frag);
  const shown = ul.querySelectorAll(":scope > li[data-path]").length;
  if (r.next) {
    const btn = el("button", { type: "button" }, "Load " + Math.min(state.info.pageSize, r.total - shown) + " more");
    const li = el("li", { class: "more" }, btn, el("span", { class: "muted" }, "  " + shown.toLocaleString("en-US") + " of " + r.total.toLocaleString("en-US")));
    btn.addEventListener("click", () => loadChildren(path, ul, r.next));
    ul.append(li);
  }
}

async function initTree() {
  const tree = $("#tree");
  tree.replaceChildren();
  const root = treeItem("", { name: "", numChildren: 1 });
  root.dataset.path = "/";
  $(".name", root).textContent = "/";
  $(".row", root).title = "/";
  const cnt = $(".count", root);
  if (cnt) cnt.remove();
  tree.append(root);
  await toggle(root);
}

// reveal opens the tree down to path, loading pages as needed, and marks
// it selected.
async function reveal(path) {
  const parts = path === "/" ? [] : path.slice(1).split("/");
  let cur = "/";
  let li = $('#tree li[data-path="/"]');
  for (const p of parts) {
    if (!li) break;
    if (!li.classList.contains("open")) await toggle(li);
    const next = joinPath(cur, p);
    let child = await findPaged(li, next);
    if (!child) {
      // Created since the list was loaded: reload it once.
      await refreshItem(cur);
      li = $$("#tree li[data-path]").find((x) => x.dataset.path === cur);
      child = li ? await findPaged(li, next) : null;
    }
    li = child;
    cur = next;
  }
  // Show the target's own children too.
  if (li && Number(li.dataset.children) > 0 && !li.classList.contains("open")) await toggle(li);
  $$("#tree .row.selected").forEach((r) => r.classList.remove("selected"));
  if (li) {
    const row = $(".row", li);
    row.classList.add("selected");
    row.scrollIntoView({ block: "nearest" });
  }
}

// findPaged finds path among li's children, loading further pages until
// it shows up or the list ends.
async function findPaged(li, path) {
  let child = findItem(li, path);
  while (!child) {
    const more = li.querySelector(":scope > ul > li.more button");
    if (!more) break;
    more.click();
    await waitFor(() => !li.querySelector(":scope > ul > li.more") || findItem(li, path) || li.querySelector(":scope > ul > li.more button") !== more);
    child = findItem(li, path);
  }
  return child;
}

function findItem(li, path) {
  return Array.from(li.querySelectorAll(":scope > ul > li[data-path]")).find((x) => x.dataset.path === path) || null;
}

function waitFor(cond) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const tick = () => (cond() || Date.now() - t0 > 10000 ? resolve() : setTimeout(tick, 30));
    tick();
  });
}

// refreshItem reloads the children of the tree item for path, if they
// were loaded.
async function refreshItem(path) {
  const li = $$("#tree li[data-path]").find((x) => x.dataset.path === path);
  const ul = li && li.querySelector(":scope > ul");
  if (!ul) return; // never opened: opening it loads a fresh list anyway
  ul.remove();
  li.classList.remove("open");
  const tw = $(".twisty", li);
  if (tw) tw.textContent = "▸";
  await toggle(li);
}

// ---------- node ----------

async function selectNode(path) {
  state.selected = path;
  $("#goto-path").value = path;
  reveal(path);
  let n;
  try {
    n = await api("GET", "node?path=" + encodeURIComponent(path));
  } catch (e) {
    showError(e);
    $("#node").hidden = true;
    $("#node-empty").hidden = false;
    return;
  }
  if (state.selected !== path) return;
  state.node = n;
  renderNode();
}

function renderNode() {
  const n = state.node;
  $("#node-empty").hidden = true;
  $("#node").hidden = false;
  $("#node").dataset.path = n.path;
  $("#node-path").textContent = n.path;
  const kind = $("#node-kind");
  kind.hidden = !n.stat;
  kind.textContent = n.mode;
  kind.className = "badge " + n.mode;
  for (const b of $$("#node .write")) {
    b.disabled = !n.writable;
    b.title = n.writable ? "" : "the console is read-only (admin.console.writable=false)";
  }
  $("#btn-delete").disabled = !n.writable || n.path === "/";

  // Data.
  const view = $("#data-view");
  view.className = "";
  if (n.data === null) {
    view.textContent = "Reading refused: " + n.dataError.code + " (" + n.dataError.message + ")";
    view.classList.add("refused");
    $("#data-size").textContent = n.stat ? n.stat.dataLength + " bytes" : "";
    $$("#data-modes button").forEach((b) => b.classList.remove("active"));
  } else {
    const bytes = b64ToBytes(n.data);
    n.bytes = bytes;
    $("#data-size").textContent = bytes.length.toLocaleString("en-US") + " bytes";
    let mode = state.dataMode;
    if (!mode) {
      const t = decodeText(bytes);
      mode = !t.ok ? "hex" : isJSON(t.text) ? "json" : "text";
    }
    renderData(mode);
  }

  // Stat.
  const s = n.stat;
  if (!s) {
    $("#stat-table tbody").replaceChildren(el("tr", { "data-key": "refused" },
      el("td", {}, "refused"), el("td", {}, n.statError.code)));
    $("#btn-set").disabled = $("#btn-delete").disabled = true;
  }
  const rows = !s ? [] : [
    ["czxid", s.czxid], ["mzxid", s.mzxid], ["pzxid", s.pzxid],
    ["ctime", s.ctime, fmtTime(s.ctime)], ["mtime", s.mtime, fmtTime(s.mtime)],
    ["version", s.version], ["cversion", s.cversion], ["aversion", s.aversion],
    ["ephemeralOwner", s.ephemeralOwner, n.ephemeral ? "session owning this ephemeral node" : null],
    ["dataLength", s.dataLength], ["numChildren", s.numChildren],
  ];
  if (s) $("#stat-table tbody").replaceChildren(...rows.map(([k, v, sub]) =>
    el("tr", { "data-key": k }, el("td", {}, k), el("td", {}, String(v), sub ? el("span", { class: "sub" }, sub) : null))));

  // ACL.
  const acl = $("#acl-table tbody");
  if (n.acl) {
    acl.replaceChildren(...n.acl.map((a) =>
      el("tr", {}, el("td", {}, a.scheme + ":" + a.id), el("td", {}, a.perms))));
  } else {
    acl.replaceChildren(el("tr", {}, el("td", {}, "refused"), el("td", {}, n.aclError.code)));
  }
}

function isJSON(t) {
  const s = t.trim();
  if (!s || !"{[\"".includes(s[0])) return false;
  try { JSON.parse(s); return true; } catch (e) { return false; }
}

function renderData(mode) {
  const n = state.node;
  if (!n || n.data === null) return;
  const view = $("#data-view");
  view.className = "";
  view.dataset.mode = mode;
  $$("#data-modes button").forEach((b) => b.classList.toggle("active", b.dataset.mode === mode));
  const t = decodeText(n.bytes);
  if (mode === "hex") {
    view.classList.add("hex");
    view.textContent = n.bytes.length ? hexdump(n.bytes) : "(empty)";
  } else if (mode === "json") {
    try { view.textContent = JSON.stringify(JSON.parse(t.text), null, 2); }
    catch (e) { view.textContent = "Not JSON: " + e.message; view.classList.add("refused"); }
  } else {
    view.textContent = n.bytes.length ? t.text : "(empty)";
  }
}

const ACL_PRESETS = {
  open: { label: "world:anyone — cdrwa (OPEN_ACL_UNSAFE)", acl: [] },
  read: { label: "world:anyone — r (READ_ACL_UNSAFE)", acl: [{ scheme: "world", id: "anyone", perms: "r" }] },
  creator: { label: "auth — cdrwa (CREATOR_ALL_ACL; needs credentials)", acl: [{ scheme: "auth", id: "", perms: "cdrwa" }] },
};

function createDialog() {
  const parent = state.selected || "/";
  const name = el("input", { id: "create-name", type: "text", class: "mono", spellcheck: "false" });
  const data = el("textarea", { id: "create-data", spellcheck: "false" });
  const mode = el("select", { id: "create-mode" },
    el("option", { value: "persistent" }, "persistent"),
    el("option", { value: "sequential" }, "persistent sequential"),
    el("option", { value: "container" }, "container"));
  const acl = el("select", { id: "create-acl" },
    ...Object.entries(ACL_PRESETS).map(([k, v]) => el("option", { value: k }, v.label)));
  const full = () => joinPath(parent, name.value.trim());
  openModal({
    title: "Create a child of " + parent,
    body: [el("label", {}, "Name", name), el("label", {}, "Data (UTF-8 text)", data),
      el("label", {}, "Mode", mode), el("label", {}, "ACL", acl)],
    ok: "Create",
    validate: () => {
      const v = name.value.trim();
      if (!v || v.includes("/")) throw new APIError("BADREQUEST", "a name without '/' is required");
    },
    confirm: () => [el("span", {}, "Create ", el("code", {}, full()), " (" + mode.value + ", " +
      utf8.encode(data.value).length + " bytes, " + acl.value + " ACL)?")],
    onOK: async () => {
      const r = await api("POST", "create", {
        path: full(), data: bytesToB64(utf8.encode(data.value)), mode: mode.value,
        acl: ACL_PRESETS[acl.value].acl,
      });
      notice("Created " + r.path);
      await refreshItem(parent);
      location.hash = "#tree:" + r.path;
    },
  });
  name.focus();
}

function setDialog() {
  const n = state.node;
  const ta = el("textarea", { id: "set-data", spellcheck: "false" });
  ta.value = n.bytes ? decodeText(n.bytes).text : "";
  openModal({
    title: "Edit data of " + n.path,
    body: [el("label", {}, "Data (UTF-8 text)", ta),
      el("div", { class: "hint" }, "Written only if the node is still at version " + n.stat.version + "; otherwise the server answers BADVERSION.")],
    ok: "Save",
    confirm: () => [el("span", {}, "Set ", el("code", {}, n.path), " to " + utf8.encode(ta.value).length +
      " bytes (expected version " + n.stat.version + ")?")],
    onOK: async () => {
      await api("POST", "set", { path: n.path, data: bytesToB64(utf8.encode(ta.value)), version: n.stat.version });
      notice("Saved " + n.path);
      await selectNode(n.path);
    },
  });
  ta.focus();
}

function deleteDialog() {
  const n = state.node;
  openModal({
    title: "Delete " + n.path,
    body: [],
    ok: "Delete",
    danger: true,
    confirm: [el("span", {}, "Delete ", el("code", {}, n.path), " at version " + n.stat.version +
      "? A node with children is refused (NOTEMPTY). This cannot be undone.")],
    onOK: async () => {
      await api("POST", "delete", { path: n.path, version: n.stat.version });
      notice("Deleted " + n.path);
      const parent = parentOf(n.path);
      await refreshItem(parent);
      location.hash = "#tree:" + parent;
    },
  });
}

// ---------- ensemble ----------

async function loadEnsemble() {
  let r;
  try { r = await api("GET", "ensemble"); } catch (e) { showError(e); return; }
  const leader = r.members.find((m) => m.id === r.leader);
  const serving = r.members.filter((m) => m.serving).length;
  $("#ens-summary").textContent = (leader
    ? "leader: server " + leader.serverId + (leader.leaderSince ? ", elected " + fmtTime(leader.leaderSince) + " (" + fmtDuration(r.time - leader.leaderSince) + " ago)" : "")
    : "no leader") + " · " + serving + " of " + r.members.length + " serving · updated " + fmtTime(r.time);
  $("#members").replaceChildren(...r.members.map((m) => memberCard(m, leader)));
}

// transferDialog asks, after a confirmation, the leader's AdminServer
// (through the console) to hand leadership to member m. The AdminServer
// checks the user's credentials; the page then shows the roles change.
function transferDialog(m, leader) {
  openModal({
    title: "Make server " + m.serverId + " leader",
    body: [],
    ok: "Transfer",
    confirm: [el("span", {}, "Ask the leader, server " + leader.serverId + ", to hand leadership to server " + m.serverId +
      " (" + m.addr + ")? Writes pause while the new leader takes over; the AdminServer checks your credentials " +
      "(admin rights on /).")],
    onOK: async () => {
      const r = await api("POST", "transfer", { to: m.id });
      notice("Leadership transfer from server " + r.from + " to server " + r.to + " started");
      await loadEnsemble();
    },
  });
}

function memberCard(m, leader) {
  const card = el("div", {
    class: "card" + (m.mode === "leader" ? " is-leader" : "") + (!m.serving ? " is-down" : ""),
    "data-id": m.id, "data-mode": m.mode,
  });
  card.append(el("h3", {}, "Server " + m.serverId, el("span", { class: "addr" }, m.addr),
    el("span", { class: "badge " + m.mode, "data-role": m.mode }, m.mode)));
  if (m.serving) {
    const f = (k, v) => [el("dt", {}, k), el("dd", {}, v)];
    const dl = el("dl", {},
      ...f("zxid", m.zxid), ...f("lag", m.lag === null ? "—" : m.lag + " txns"),
      ...f("epoch", m.epoch), ...f("durability", m.durability || "—"),
      ...f("connections", fmtNum(m.connections)), ...f("sessions", fmtNum(m.sessions)),
      ...f("watches", fmtNum(m.watches)), ...f("znodes", fmtNum(m.znodes)),
      ...f("outstanding", fmtNum(m.outstanding)), ...f("ephemerals", fmtNum(m.ephemerals)),
      ...f("latency ms", fmtNum(m.latencyMin, 0) + " / " + fmtNum(m.latencyAvg, 1) + " / " + fmtNum(m.latencyMax, 0)),
      ...f("data size", fmtNum(m.dataSize) + " B"),
      ...f("fsyncs", fmtNum(m.fsyncCount) + " · avg " + fmtNum(m.fsyncAvg, 2) + " ms"),
      ...f("snapshots", fmtNum(m.snapshotCount) + " · avg " + fmtNum(m.snapshotAvg, 1) + " ms"),
      ...f("last snapshot", m.lastSnapshotZxid ? m.lastSnapshotZxid + " · " + fmtTime(m.lastSnapshotTime)
        : m.lastSnapshotError ? "— (" + m.lastSnapshotError + ")" : m.admin ? "none yet" : "— (AdminServer unknown)"),
      ...f("elections", fmtNum(m.elections) + (m.elections ? " · avg " + fmtNum(m.electionAvg, 0) + " ms, max " + fmtNum(m.electionMax, 0) + " ms" : "")),
      ...f("uptime", fmtDuration(m.uptime)), ...f("packets in/out", fmtNum(m.received) + " / " + fmtNum(m.sent)));
    if (m.mode === "leader") {
      dl.append(...f("leader since", m.leaderSince ? fmtTime(m.leaderSince) : "—"),
        ...f("learners", m.learners), ...f("synced", m.syncedFollowers + " followers"));
    }
    card.append(dl);
  }
  if (m.error) card.append(el("div", { class: "err" }, m.error));
  if (state.info.writable && m.mode === "follower") {
    const why = !leader ? "no member leads right now"
      : !leader.admin ? "this console does not know the leader's AdminServer address"
      : "";
    const b = el("button", {
      type: "button", class: "make-leader", "data-id": m.id, disabled: why !== "",
      title: why || "ask the leader to hand leadership to this server",
      onclick: () => transferDialog(m, leader),
    }, "Make leader");
    card.append(el("div", { class: "card-actions" }, b, why ? el("span", { class: "muted" }, why) : null));
  }
  return card;
}

// ---------- metrics ----------

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d"];
const metrics = { members: [], samples: [], last: 0, interval: 1000, window: 300000 };

async function pollMetrics() {
  let r;
  try { r = await api("GET", "metrics?since=" + metrics.last); } catch (e) { showError(e); return; }
  metrics.members = r.members;
  metrics.interval = r.interval;
  metrics.window = r.window;
  for (const s of r.samples) metrics.samples.push(s);
  if (r.samples.length) metrics.last = r.samples[r.samples.length - 1].t;
  const cutoff = metrics.last - metrics.window;
  while (metrics.samples.length && metrics.samples[0].t < cutoff) metrics.samples.shift();
  $("#legend").replaceChildren(...metrics.members.map((m, i) =>
    el("span", {}, el("i", { class: "c" + i }), "server " + (m.serverId || m.id))));
  $$("#legend i").forEach((i, k) => { i.style.background = COLORS[k % COLORS.length]; });
  $("#metrics-summary").textContent = metrics.samples.length + " samples, every " + (metrics.interval / 1000) + " s, last " + fmtDuration(metrics.window);
  drawCharts();
}

function drawCharts() {
  for (const c of $$("#charts canvas")) drawChart(c, c.dataset.metric);
}

// drawChart plots one metric per member against time, newest at the
// right edge, over the sampling window.
function drawChart(canvas, key) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (!w || !h) return;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const samples = metrics.samples;
  canvas.dataset.samples = samples.length;
  const padL = 44, padR = 8, padT = 8, padB = 20;
  const pw = w - padL - padR, ph = h - padT - padB;
  const tMax = metrics.last || Date.now();
  const span = Math.min(metrics.window, Math.max(60000, samples.length ? tMax - samples[0].t : 0));
  const tMin = tMax - span;
  let vMax = 0;
  for (const s of samples) for (const p of s.points) {
    const v = p[key];
    if (p.up && v !== null && v !== undefined && v > vMax) vMax = v;
  }
  vMax = niceCeil(vMax);
  g.font = "10px system-ui, sans-serif";
  g.fillStyle = "#6b7685";
  g.strokeStyle = "#e5e7eb";
  g.lineWidth = 1;
  g.textAlign = "right";
  g.textBaseline = "middle";
  for (let i = 0; i <= 4; i++) {
    const y = padT + ph - (ph * i) / 4;
    g.beginPath(); g.moveTo(padL, Math.round(y) + 0.5); g.lineTo(padL + pw, Math.round(y) + 0.5); g.stroke();
    g.fillText(shortNum((vMax * i) / 4), padL - 6, y);
  }
  g.textBaseline = "top";
  for (let i = 0; i <= 3; i++) {
    const t = tMin + (span * i) / 3;
    g.textAlign = i === 0 ? "left" : i === 3 ? "right" : "center";
    g.fillText(i === 3 ? "now" : "-" + fmtDuration(tMax - t), padL + (pw * i) / 3, padT + ph + 5);
  }
  const x = (t) => padL + ((t - tMin) / span) * pw;
  const y = (v) => padT + ph - (vMax ? (v / vMax) * ph : 0);
  metrics.members.forEach((m, i) => {
    g.strokeStyle = COLORS[i % COLORS.length];
    g.lineWidth = 1.6;
    g.beginPath();
    let pen = false;
    for (const s of samples) {
      const p = s.points[i];
      const v = p ? p[key] : null;
      if (!p || !p.up || v === null || v === undefined || s.t < tMin) { pen = false; continue; }
      if (pen) g.lineTo(x(s.t), y(v)); else g.moveTo(x(s.t), y(v));
      pen = true;
    }
    g.stroke();
  });
  if (!samples.length) {
    g.fillStyle = "#6b7685";
    g.textAlign = "center";
    g.textBaseline = "middle";
    g.fillText("waiting for samples…", padL + pw / 2, padT + ph / 2);
  }
}

function niceCeil(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 4, 6, 8, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function shortNum(v) {
  if (v >= 1e6) return (v / 1e6).toFixed(v % 1e6 ? 1 : 0) + "M";
  if (v >= 1e3) return (v / 1e3).toFixed(v % 1e3 ? 1 : 0) + "k";
  return String(Math.round(v * 100) / 100);
}

// ---------- sessions and watches ----------

async function loadSessions() {
  let r;
  try { r = await api("GET", "sessions"); } catch (e) { showError(e); return; }
  const rows = [];
  let n = 0;
  for (const m of r.members) {
    rows.push(el("tr", { class: "group" }, el("td", { colspan: 11 }, "Server " + m.id + "  " + m.addr +
      (m.error ? "  — " + m.error : "  — " + plural(m.connections.length, "connection")))));
    for (const c of m.connections) {
      n++;
      rows.push(el("tr", { "data-session": c.sessionId || "" },
        el("td", {}, m.id), el("td", { class: "mono" }, c.remote),
        el("td", { class: c.sessionId ? "mono" : "muted" }, c.sessionId || "no session"),
        el("td", {}, c.timeout ? c.timeout + " ms" : "—"), el("td", { class: "mono" }, c.lastOp || "—"),
        el("td", { class: "mono" }, c.lastZxid || "—"), el("td", {}, c.queued), el("td", {}, c.received),
        el("td", {}, c.sent), el("td", {}, c.minLatency + "/" + c.avgLatency + "/" + c.maxLatency + " ms"),
        el("td", {}, c.established ? fmtTime(c.established) : "—")));
    }
  }
  $("#sessions-summary").textContent = plural(n, "connection") + " on " + plural(r.members.length, "member") + " (from cons)";
  $("#sessions-table tbody").replaceChildren(...rows);
}

async function loadWatches() {
  let r;
  try { r = await api("GET", "watches"); } catch (e) { showError(e); return; }
  const rows = [];
  let total = 0;
  for (const m of r.members) {
    total += m.total;
    rows.push(el("tr", { class: "group" }, el("td", { colspan: 4 }, "Server " + m.id + "  " + m.addr + "  — " +
      (m.error ? m.error : plural(m.connections, "connection") + " watching " + plural(m.paths, "path") + ", " + plural(m.total, "watch", "watches") +
        (m.truncated ? " (list truncated)" : "")))));
    for (const s of m.sessions) {
      rows.push(el("tr", { "data-session": s.sessionId },
        el("td", {}, m.id), el("td", { class: "mono" }, s.sessionId), el("td", {}, s.count),
        el("td", { class: "paths" }, s.paths.join("  "))));
    }
  }
  $("#watches-summary").textContent = plural(total, "data watch", "data watches") + " in all (from wchs and wchc)";
  $("#watches-table tbody").replaceChildren(...rows);
}

// ---------- key-value store ----------

// showBytes renders a key, qualifier or value: as text when it is
// printable UTF-8, else as hex.
function showBytes(b64) {
  const b = b64ToBytes(b64 || "");
  const t = decodeText(b);
  if (t.ok && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(t.text)) return t.text;
  let h = "0x";
  for (const x of b.subarray(0, 512)) h += x.toString(16).padStart(2, "0");
  return b.length > 512 ? h + "… (" + b.length + " bytes)" : h;
}

async function loadKV() {
  let r;
  try { r = await api("GET", "kv/group"); } catch (e) { showError(e); return; }
  $("#kv-unset").hidden = r.configured;
  $("#kv-body").hidden = !r.configured;
  if (!r.configured) { $("#kv-summary").textContent = "not configured"; return; }
  const reachable = r.members.filter((m) => m.reachable).length;
  $("#kv-summary").textContent = (r.leader ? "leader " + r.leader + (r.epoch ? " · epoch " + r.epoch : "") : "no leader") +
    " · " + reachable + " of " + plural(r.members.length, "member") + " reachable · " + plural(r.tables.length, "table");
  $("#kv-members").replaceChildren(...r.members.map((m) => {
    const f = (k, v) => [el("dt", {}, k), el("dd", {}, v)];
    const card = el("div", { class: "card" + (m.role === "leader" ? " is-leader" : "") + (!m.reachable ? " is-down" : ""), "data-addr": m.addr },
      el("h3", {}, "Member", el("span", { class: "addr" }, m.addr), el("span", { class: "badge " + m.role, "data-role": m.role }, m.role)));
    const dl = el("dl", {}, ...f("reachable", m.reachable ? "yes" : "no"));
    if (m.role === "follower" || m.role === "electing") {
      dl.append(...f("leader", m.leaderAddr ? "server " + m.leaderId + " at " + m.leaderAddr : "none known"), ...f("epoch", m.epoch || "—"));
    }
    card.append(dl);
    if (m.error) card.append(el("div", { class: "err" }, m.error));
    return card;
  }));
  const sel = $("#kv-table");
  const cur = sel.value;
  sel.replaceChildren(...r.tables.map((t) => el("option", { value: t.name }, t.name)));
  if (r.tables.some((t) => t.name === cur)) sel.value = cur;
  $("#kv-tables tbody").replaceChildren(...(r.tables.length ? r.tables.map((t) => el("tr", { "data-table": t.name },
    el("td", { class: "mono" }, t.name),
    el("td", {}, t.families.map((f) => f.name + " (" + f.maxVersions + ")").join(", ")),
    el("td", {}, el("button", { type: "button", onclick: () => { sel.value = t.name; $("#kv-row").value = ""; kvRead("scan"); } }, "Scan")))) :
    [el("tr", {}, el("td", { colspan: 3, class: "muted" }, r.leader ? "no tables" : "no leader to ask"))]));
}

function kvRow(key, cells) {
  if (!cells.length) return [el("tr", { "data-row": showBytes(key) }, el("td", { class: "key" }, showBytes(key)), el("td", { colspan: 4, class: "muted" }, "no cells"))];
  return cells.map((c, i) => el("tr", { "data-row": showBytes(key) },
    el("td", { class: "key" }, i === 0 ? showBytes(key) : ""), el("td", {}, c.family),
    el("td", { class: "mono" }, showBytes(c.qualifier)), el("td", { class: "val" }, showBytes(c.value)),
    el("td", { class: "mono" }, c.zxid)));
}

async function kvRead(kind) {
  const table = $("#kv-table").value;
  if (!table) { showError(new APIError("BADREQUEST", "no table to read")); return; }
  const q = new URLSearchParams({ table });
  const key = $("#kv-row").value;
  if ($("#kv-hex").checked) q.set("enc", "hex");
  const tbody = $("#kv-result tbody");
  try {
    if (kind === "get") {
      q.set("row", key);
      const r = await api("GET", "kv/get?" + q);
      $("#kv-result-head").textContent = "Row " + showBytes(r.key) + " of " + table + ": " + plural(r.cells.length, "cell");
      tbody.replaceChildren(...kvRow(r.key, r.cells));
    } else {
      q.set("from", key);
      q.set("limit", $("#kv-limit").value || "20");
      const r = await api("GET", "kv/scan?" + q);
      $("#kv-result-head").textContent = "Scan of " + table + (key ? " from " + key : "") + ": " + plural(r.rows.length, "row") + (r.more ? " (more follow)" : "");
      tbody.replaceChildren(...r.rows.flatMap((row) => kvRow(row.key, row.cells)));
    }
    clearError();
  } catch (e) {
    if (e.code === "NOTFOUND") {
      $("#kv-result-head").textContent = "Row " + key + " of " + table + ": not found";
      tbody.replaceChildren();
      return;
    }
    showError(e);
  }
}

// ---------- replicated logs ----------

const LOGS_KEY = "corral.console.logs";
const logs = { names: [], open: "", mode: "text" };

function saveLogNames() { localStorage.setItem(LOGS_KEY, JSON.stringify(logs.names)); }

async function loadLogs() {
  let info;
  try { info = await api("GET", "logs/info"); } catch (e) { showError(e); return; }
  $("#logs-unset").hidden = info.configured;
  $("#logs-body").hidden = !info.configured;
  if (!info.configured) { $("#logs-summary").textContent = "not configured"; return; }
  let r = { logs: [] };
  if (logs.names.length) {
    try { r = await api("GET", "logs/stat?names=" + encodeURIComponent(logs.names.join(","))); } catch (e) { showError(e); return; }
  }
  $("#logs-summary").textContent = "endpoints " + info.endpoints.join(", ") + " · " + plural(r.logs.length, "log");
  $("#logs-table tbody").replaceChildren(...(r.logs.length ? r.logs.map((l) => el("tr", { "data-log": l.name, class: l.name === logs.open ? "open" : "" },
    el("td", { class: "mono" }, l.name),
    ...(l.error ? [el("td", { colspan: 5, class: "refused" }, l.code + ": " + l.error)] : [
      el("td", {}, fmtNum(l.start)), el("td", {}, fmtNum(l.committed)), el("td", {}, fmtNum(l.end)),
      el("td", {}, fmtNum(l.size) + " B"), el("td", {}, l.sealed ? "sealed" : "open")]),
    el("td", {},
      el("button", { type: "button", disabled: !!l.error, onclick: () => { location.hash = "#logs:" + l.name; } }, "Tail"),
      el("button", { type: "button", onclick: () => {
        logs.names = logs.names.filter((n) => n !== l.name); saveLogNames();
        if (logs.open === l.name) location.hash = "#logs"; else loadLogs();
      } }, "Forget")))) :
    [el("tr", {}, el("td", { colspan: 7, class: "muted" }, "Name a log above to see it."))]));
  if (logs.open) await loadTail();
}

async function loadTail() {
  const name = logs.open;
  $("#tail").hidden = !name;
  if (!name) return;
  let r;
  try {
    r = await api("GET", "logs/tail?" + new URLSearchParams({ name, kib: $("#tail-kib").value }));
  } catch (e) {
    if (e.code !== "NOTFOUND") { showError(e); return; }
    $("#tail-head").textContent = "Tail of " + name;
    $("#tail-info").textContent = "";
    $("#tail-view").textContent = e.message;
    return;
  }
  if (logs.open !== name) return;
  const bytes = b64ToBytes(r.data || "");
  $("#tail-head").textContent = "Tail of " + name;
  $("#tail-info").textContent = "bytes " + fmtNum(r.offset) + "–" + fmtNum(r.offset + bytes.length) + " of " +
    fmtNum(r.stat.committed) + " committed" + (r.stat.sealed ? " · sealed" : " · refreshed " + fmtTime(Date.now()));
  $$("#tail-modes button").forEach((b) => b.classList.toggle("active", b.dataset.mode === logs.mode));
  const view = $("#tail-view");
  view.className = logs.mode === "hex" ? "hex" : "";
  view.dataset.mode = logs.mode;
  if (!bytes.length) view.textContent = "(empty)";
  else if (logs.mode === "hex") view.textContent = hexdump(bytes);
  else view.textContent = decodeText(bytes).text;
  view.scrollTop = view.scrollHeight;
}

// ---------- views and polling ----------

// Polling runs only for the visible view of a visible tab: the ensemble
// every 2 s, metrics every sample interval. The server samples metrics
// only while some page polls.
function schedulePoll() {
  clearTimeout(state.pollTimer);
  if (document.visibilityState !== "visible") return;
  let f = null, every = 0;
  if (state.view === "ensemble") { f = loadEnsemble; every = 2000; }
  if (state.view === "metrics") { f = pollMetrics; every = (state.info && state.info.interval) || 1000; }
  if (state.view === "logs" && logs.open) { f = loadLogs; every = 2000; }
  if (!f) return;
  const view = state.view;
  state.pollTimer = setTimeout(async () => {
    if (state.view !== view) return;
    await f();
    schedulePoll();
  }, every);
}

async function route() {
  const h = decodeURIComponent(location.hash.slice(1)) || "tree:/";
  let view = h, arg = "";
  const i = h.indexOf(":");
  if (i >= 0) { view = h.slice(0, i); arg = h.slice(i + 1); }
  if (!["tree", "ensemble", "metrics", "sessions", "watches", "kv", "logs"].includes(view)) view = "tree";
  if (view !== state.view) $("#notice").hidden = true;
  state.view = view;
  $$("#tabs a").forEach((a) => a.classList.toggle("active", a.dataset.view === view));
  $$("main > .view").forEach((v) => { v.hidden = v.id !== "view-" + view; });
  if (view === "tree" && arg) await selectNode(arg);
  if (view === "ensemble") await loadEnsemble();
  if (view === "metrics") await pollMetrics();
  if (view === "sessions") await loadSessions();
  if (view === "watches") await loadWatches();
  if (view === "kv") await loadKV();
  if (view === "logs") {
    logs.open = arg;
    if (arg && !logs.names.includes(arg)) { logs.names.push(arg); saveLogNames(); }
    await loadLogs();
  }
  schedulePoll();
}

async function main() {
  try {
    state.info = await api("GET", "info");
  } catch (e) {
    showError(e);
    return;
  }
  const badge = $("#mode-badge");
  badge.textContent = state.info.writable ? "writable" : "read-only";
  badge.className = "badge " + (state.info.writable ? "rw" : "ro");
  $("#error-close").addEventListener("click", clearError);
  $("#cred-button").addEventListener("click", credentialsDialog);
  $("#modal-form").addEventListener("submit", modalSubmit);
  $("#modal-cancel").addEventListener("click", closeModal);
  $("#modal").addEventListener("cancel", () => { modalState = null; });
  $("#goto-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = $("#goto-path").value.trim() || "/";
    location.hash = "#tree:" + p;
  });
  $$("#data-modes button").forEach((b) => b.addEventListener("click", () => {
    state.dataMode = b.dataset.mode;
    renderData(b.dataset.mode);
  }));
  $("#btn-refresh").addEventListener("click", async () => {
    if (!state.selected) return;
    await refreshItem(state.selected);
    await selectNode(state.selected);
  });
  $("#btn-create").addEventListener("click", createDialog);
  $("#btn-set").addEventListener("click", setDialog);
  $("#btn-delete").addEventListener("click", deleteDialog);
  $("#sessions-refresh").addEventListener("click", loadSessions);
  $("#watches-refresh").addEventListener("click", loadWatches);
  $("#kv-refresh").addEventListener("click", loadKV);
  $("#kv-form").addEventListener("submit", (ev) => { ev.preventDefault(); kvRead("get"); });
  $("#kv-scan").addEventListener("click", () => kvRead("scan"));
  try { logs.names = JSON.parse(localStorage.getItem(LOGS_KEY) || "[]").filter((n) => typeof n === "string"); } catch (e) { logs.names = []; }
  $("#logs-add").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const n = $("#logs-name").value.trim();
    if (!n) return;
    $("#logs-name").value = "";
    location.hash = "#logs:" + n;
  });
  $$("#tail-modes button").forEach((b) => b.addEventListener("click", () => { logs.mode = b.dataset.mode; loadTail(); }));
  $("#tail-kib").addEventListener("change", loadTail);
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", () => state.view === "metrics" && drawCharts());
  document.addEventListener("visibilitychange", schedulePoll);
  refreshIdentity();
  await initTree();
  await route();
  document.body.dataset.ready = "1";
}

main();
