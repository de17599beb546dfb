// kubeloop dashboard: renders the workload views streamed by /api/stream (server-sent events).
// Each message is a snapshot (all workloads) or a delta (changed and removed workloads); a card
// is re-rendered only when its workload changed. Only the pause, resume and undo buttons write,
// through the server, with the cluster's bearer token the user pasted (kept in sessionStorage).
"use strict";

const UNKNOWN_COLOUR = "#9aa3b5";
// Attention first: a failed rollout, then rollouts under way, then paused ones, then settled ones.
const PHASE_ORDER = ["failed", "progressing", "waiting", "paused", "complete"];

const workloads = new Map();
const cards = new Map();
let clockOffset = 0; // server clock minus browser clock, in seconds (timelines use the server's)
const main = document.getElementById("workloads");
const connection = document.getElementById("connection");
// Lets a test (or a curious user) see that the page was never reloaded while it updated.
window.kubeloopDashboard = { loadedAt: Date.now(), messages: 0, embedded: false, workloads };

function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
  })[c]);
}

// A revision's colour comes from its hash alone (FNV-1a onto a hue wheel that skips the reds
// used for failing pods): it stays the same across reloads and whichever revisions come and go.
function colourOfHash(hash) {
  if (!hash) return UNKNOWN_COLOUR;
  let h = 0x811c9dc5;
  for (let i = 0; i < hash.length; i++) {
    h ^= hash.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const hue = 20 + (h % 320);
  const light = 38 + ((h >>> 9) % 3) * 7;
  return `hsl(${hue}, 62%, ${light}%)`;
}

function revisionColours(view) {
  const colours = new Map(view.revisions.map((r) => [r.id, colourOfHash(r.hash || r.id)]));
  return (id) => colours.get(id) || colourOfHash(id);
}

function phaseOf(view) {
  return view.progress.paused ? "paused" : view.rollout.phase;
}

function failingPods(view) {
  return view.pods.filter((pod) => pod.state === "failing").length;
}

// Sort key: phase (attention first), then workloads with failing pods, then by key.
function urgency(view) {
  const rank = PHASE_ORDER.indexOf(phaseOf(view));
  return [rank < 0 ? PHASE_ORDER.length : rank, failingPods(view) > 0 ? 0 : 1];
}

function compareViews(a, b) {
  const [ra, fa] = urgency(a), [rb, fb] = urgency(b);
  return ra - rb || fa - fb || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function progressBars(view) {
  const p = view.progress;
  const live = view.pods.filter((pod) => pod.state !== "terminating").length;
  const scale = Math.max(p.maxPods, p.current, live, 1);
  const at = (n) => `${(100 * Math.min(n, scale)) / scale}%`;
  const markers = (floor) =>
    `<span class="marker" style="left:${at(p.desired)}" title="desired ${p.desired}"></span>` +
    (p.maxSurge > 0 ? `<span class="marker surge" style="left:${at(p.maxPods)}" title="surge bound ${p.maxPods}"></span>` : "") +
    (floor ? `<span class="marker floor" style="left:${at(p.minAvailable)}" title="must stay available ${p.minAvailable}"></span>` : "");
  const row = (label, cls, n, of, floor) =>
    `<div class="bar"><span>${label}</span><span class="track"><span class="fill ${cls}" style="width:${at(n)}"></span>` +
    `${markers(floor)}</span><span class="num">${n}/${of}</span></div>`;
  return `<div class="bars">` +
    row("pods", "pods", p.current, p.maxPods, false) +
    row("updated", "updated", p.updated, p.expectedUpdated, false) +
    row("ready", "ready", p.ready, p.desired, false) +
    row("available", "available", p.available, p.desired, true) +
    `</div><div class="bounds"><i class="desired"></i>desired ${p.desired}` +
    `<i class="surge"></i>at most ${p.maxPods} pods (maxSurge ${p.maxSurge})` +
    `<i class="floor"></i>at least ${p.minAvailable} available (maxUnavailable ${p.maxUnavailable})</div>`;
}

function podTiles(view, colour) {
  const groups = new Map(view.revisions.map((r) => [r.id, []]));
  for (const pod of view.pods) {
    if (!groups.has(pod.revision)) groups.set(pod.revision, []);
    groups.get(pod.revision).push(pod);
  }
  const byId = new Map(view.revisions.map((r) => [r.id, r]));
  let html = "";
  for (const [id, pods] of groups) {
    const revision = byId.get(id);
    if (!pods.length && !(revision && revision.isUpdate)) continue;
    const label = revision ? `rev ${revision.revision}${revision.isUpdate ? " (update)" : ""}` : "unknown revision";
    const tiles = pods.map((pod) =>
      `<span class="tile state-${esc(pod.state)}" style="--rev:${colour(id)}" data-colour="${colour(id)}" data-pod="${esc(pod.name)}" ` +
      `data-revision="${esc(id)}" data-state="${esc(pod.state)}" data-update="${revision && revision.isUpdate ? "true" : "false"}" ` +
      `title="${esc(pod.name)}\n${esc(pod.state)}${pod.reason ? ` (${esc(pod.reason)})` : ""}` +
      `${pod.node ? `\non ${esc(pod.node)}` : ""}${pod.restarts ? `\n${pod.restarts} restarts` : ""}"></span>`).join("");
    html += `<div class="revrow" style="--rev:${colour(id)}"><span class="revlabel"><b></b>${esc(label)}` +
      `<small title="${esc(id)}">${esc(revision ? revision.image || id : id)}</small></span>` +
      `<span class="tiles">${tiles || "<small>no pods</small>"}</span></div>`;
  }
  return html || "<p class='message'>no pods</p>";
}

// -- the timeline: a time axis and a window the user zooms, remembered by the browser ---------
const WINDOW_KEY = "kubeloop.dashboard.timelineWindow";
const WINDOWS = [30, 60, 300, 900, 3600, 0]; // seconds shown; 0: everything since the server started watching
const TICK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
const savedWindow = localStorage.getItem(WINDOW_KEY);
let timelineWindow = savedWindow !== null && WINDOWS.includes(Number(savedWindow)) ? Number(savedWindow) : 300;

function windowLabel(seconds) {
  if (!seconds) return "all";
  return seconds < 60 ? `${seconds}s` : seconds < 3600 ? `${seconds / 60}m` : `${seconds / 3600}h`;
}

function clockLabel(t, step) {
  const d = new Date(t * 1000); // the server's instant, shown in the browser's time zone
  const two = (n) => String(n).padStart(2, "0");
  const hm = `${two(d.getHours())}:${two(d.getMinutes())}`;
  return step < 60 ? `${hm}:${two(d.getSeconds())}` : hm;
}

function timelineChart(view, colour) {
  const samples = view.timeline || [];
  if (!samples.length) return "";
  const width = 600, height = 112, pad = 14, axis = 20;
  const now = Date.now() / 1000 + clockOffset;
  const end = Math.max(now, samples[samples.length - 1].t);
  const start = timelineWindow ? end - timelineWindow : Math.min(samples[0].t, end - 1);
  const span = Math.max(end - start, 1);
  const x = (t) => pad + ((width - 2 * pad) * (Math.max(t, start) - start)) / span;
  // What each sample covers, clipped to the window (a sample before it holds until the next one).
  const segments = samples.map((s, i) => ({ counts: s.counts, from: s.t, to: i + 1 < samples.length ? samples[i + 1].t : end }))
    .filter((seg) => seg.to > start);
  const totals = segments.map((seg) => Object.values(seg.counts).reduce((a, b) => a + b, 0));
  const top = Math.max(view.progress.maxPods, ...totals, 1);
  const bottom = height - axis;
  const y = (n) => bottom - ((bottom - pad) * n) / top;
  const ids = [...view.revisions.map((r) => r.id).reverse()];
  for (const seg of segments) for (const id of Object.keys(seg.counts)) if (!ids.includes(id)) ids.unshift(id);
  const base = segments.map(() => 0);
  let paths = "";
  for (const id of ids) {
    const upper = [], lower = [];
    segments.forEach((seg, i) => {
      const n = seg.counts[id] || 0;
      upper.push(`${x(seg.from)},${y(base[i] + n)}`, `${x(seg.to)},${y(base[i] + n)}`);
      lower.push(`${x(seg.from)},${y(base[i])}`, `${x(seg.to)},${y(base[i])}`);
      base[i] += n;
    });
    if (upper.length) {
      paths += `<polygon points="${upper.join(" ")} ${lower.reverse().join(" ")}" fill="${colour(id)}" ` +
        `fill-opacity="0.8"><title>${esc(id)}</title></polygon>`;
    }
  }
  // About six ticks on round steps of the clock.
  const step = TICK_STEPS.find((candidate) => span / candidate <= 6) || 3600 * Math.ceil(span / 6 / 3600);
  let ticks = "";
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) {
    ticks += `<line class="tick" x1="${x(t)}" x2="${x(t)}" y1="${bottom}" y2="${bottom + 4}" stroke="#9aa3b5"/>` +
      `<text class="tick" x="${x(t)}" y="${bottom + 14}" text-anchor="${x(t) > width - 40 ? "end" : x(t) < 40 ? "start" : "middle"}" data-t="${t}">${clockLabel(t, step)}</text>`;
  }
  const desired = view.progress.desired;
  const shown = timelineWindow ? `last ${windowLabel(timelineWindow)}` : `all ${Math.round(span)} s`;
  return `<svg class="timeline" viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" data-window="${timelineWindow}" ` +
    `data-start="${start}" data-end="${end}">${paths}` +
    `<line x1="${pad}" x2="${width - pad}" y1="${bottom}" y2="${bottom}" stroke="#9aa3b5"/>${ticks}` +
    `<line x1="${pad}" x2="${width - pad}" y1="${y(desired)}" y2="${y(desired)}" stroke="#1d2330" stroke-dasharray="3 3"/>` +
    `<text x="${pad}" y="10">pods per revision, ${shown} (dashed: desired ${desired}; scroll to zoom)</text></svg>`;
}

function redrawTimelines() {
  for (const [key, view] of workloads) {
    const box = cards.get(key)?.querySelector(".timeline-box");
    if (box) box.innerHTML = timelineChart(view, revisionColours(view));
  }
  for (const button of document.querySelectorAll("#zoom button")) {
    button.classList.toggle("active", Number(button.dataset.window) === timelineWindow);
  }
}

function setTimelineWindow(seconds) {
  timelineWindow = seconds;
  localStorage.setItem(WINDOW_KEY, String(seconds));
  redrawTimelines();
}

function revisionTable(view, colour) {
  const rows = view.revisions.map((r) =>
    `<tr data-revision="${esc(r.id)}" data-colour="${colour(r.id)}"><td><b style="color:${colour(r.id)}">&#9632;</b> ${r.revision}</td><td>${esc(r.id)}</td>` +
    `<td>${esc(r.image)}</td><td class="num">${r.desired ?? "–"}</td><td class="num">${r.current}</td>` +
    `<td class="num">${r.ready}</td><td class="num">${r.available}</td></tr>`).join("");
  const title = view.kind === "Deployment" ? "ReplicaSets" : "Revisions";
  return `<h3>${title}</h3><table><tr><th>rev</th><th>name</th><th>image</th><th>desired</th><th>current</th>` +
    `<th>ready</th><th>available</th></tr>${rows}</table>`;
}

function conditionTable(view) {
  if (!view.conditions.length) return "";
  const rows = view.conditions.map((c) =>
    `<tr class="cond-${esc(c.status)}"><td>${esc(c.type)}</td><td>${esc(c.status)}</td><td>${esc(c.reason)}</td>` +
    `<td>${esc(c.message)}</td></tr>`).join("");
  return `<h3>Conditions</h3><table>${rows}</table>`;
}

function eventTable(view) {
  if (!view.events.length) return "";
  const rows = view.events.map((e) =>
    `<tr class="ev-${esc(e.type)}"><td>${esc(e.reason)}</td><td>${esc(e.object)}</td>` +
    `<td>${esc(e.message)}${e.count > 1 ? ` (x${e.count})` : ""}</td><td>${esc((e.time || "").slice(11, 19))}</td></tr>`).join("");
  return `<h3>Events</h3><table>${rows}</table>`;
}

function chips(view) {
  let html = "";
  if (view.progress.paused) html += `<span class="chip paused" title="spec.paused: the controller makes no rollout progress">paused</span>`;
  const partition = view.partition;
  if (partition) {
    const kept = partition.kept === null ? "unparsable" : `keeps ${partition.kept} on older revisions`;
    html += `<span class="chip partition" title="spec.updateStrategy.partition">partition ${esc(partition.value)}` +
      ` <small>(${esc(kept)})</small></span>`;
  }
  const failing = failingPods(view);
  if (failing) html += `<span class="chip failing">${failing} failing pod${failing > 1 ? "s" : ""}</span>`;
  return html;
}

// -- pause, resume, undo: sent with the cluster's bearer token --------------------------------
const TOKEN_KEY = "kubeloop.dashboard.token";
const actionResults = new Map(); // workload key -> {ok, text}: survives the card's re-rendering

function actionButtons(view) {
  const result = actionResults.get(view.key);
  const hint = sessionStorage.getItem(TOKEN_KEY) ? "" : " (paste the cluster's token above first)";
  const button = (action, label, title) =>
    `<button class="action" data-action="${action}" title="${esc(title + hint)}">${label}</button>`;
  return `<span class="actions">` +
    (view.progress.paused ? button("resume", "Resume", "resume the rollout (kubectl rollout resume)")
      : button("pause", "Pause", "pause the rollout (kubectl rollout pause)")) +
    button("undo", "Undo", "roll back to the previous revision (kubectl rollout undo)") +
    (result ? `<span class="action-result ${result.ok ? "ok" : "refused"}">${esc(result.text)}</span>` : "") +
    `</span>`;
}

async function act(key, action) {
  const view = workloads.get(key);
  if (!view) return;
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const path = [view.kind, view.namespace, view.name, action].map(encodeURIComponent).join("/");
  let result;
  try {
    const response = await fetch(`/api/workloads/${path}`, { method: "POST", headers });
    const body = await response.json().catch(() => ({ message: response.statusText }));
    result = { ok: response.ok, text: response.ok ? body.message : `${response.status}: ${body.message}` };
  } catch (error) {
    result = { ok: false, text: String(error) };
  }
  actionResults.set(key, result);
  drawCard(key);
}

function renderCard(view) {
  const colour = revisionColours(view);
  const phase = phaseOf(view);
  return `<h2><span class="kind">${esc(view.kind)}</span>${esc(view.namespace)}/${esc(view.name)}` +
    `<span class="badge ${esc(phase)}">${esc(phase)}</span><small class="kind">${esc(view.strategy)}</small>` +
    `${chips(view)}${actionButtons(view)}</h2>` +
    `<p class="message">${esc(view.rollout.message)}</p>` +
    `<div class="columns"><div><h3>Progress</h3>${progressBars(view)}<h3>Pods by revision</h3>` +
    `${podTiles(view, colour)}<h3>Timeline</h3><div class="timeline-box">${timelineChart(view, colour)}</div></div>` +
    `<div>${revisionTable(view, colour)}${conditionTable(view)}${eventTable(view)}</div></div>`;
}

function cardFor(key) {
  let card = cards.get(key);
  if (!card) {
    card = document.createElement("section");
    card.className = "card";
    card.id = `w:${key}`;
    card.dataset.key = key;
    cards.set(key, card);
  }
  return card;
}

function removeCard(key) {
  cards.get(key)?.remove();
  cards.delete(key);
  workloads.delete(key);
}

let haveSnapshot = false; // "No Deployments or CloneSets yet" is said only once the cluster said so
const summary = document.getElementById("summary");
const namespaceSelect = document.getElementById("namespace");
const searchBox = document.getElementById("search");
const filters = { namespace: "", search: "" };

function matches(view) {
  if (filters.namespace && view.namespace !== filters.namespace) return false;
  const words = filters.search.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const haystack = [view.kind, view.namespace, view.name, phaseOf(view),
    ...view.revisions.map((r) => `${r.id} ${r.image}`), ...view.pods.map((p) => p.name)].join(" ").toLowerCase();
  return words.every((word) => haystack.includes(word));
}

function refreshNamespaces() {
  const namespaces = [...new Set([...workloads.values()].map((v) => v.namespace))].sort();
  if (filters.namespace && !namespaces.includes(filters.namespace)) namespaces.push(filters.namespace);
  const wanted = ["", ...namespaces].join("\n");
  if (namespaceSelect.dataset.options === wanted) return;
  namespaceSelect.dataset.options = wanted;
  namespaceSelect.innerHTML = `<option value="">all namespaces</option>` +
    namespaces.map((ns) => `<option value="${esc(ns)}">${esc(ns)}</option>`).join("");
  namespaceSelect.value = filters.namespace;
}

function refreshSummary(shown) {
  const counts = new Map(PHASE_ORDER.map((phase) => [phase, 0]));
  for (const view of shown) counts.set(phaseOf(view), (counts.get(phaseOf(view)) || 0) + 1);
  const failing = shown.reduce((n, view) => n + failingPods(view), 0);
  summary.innerHTML = `<span class="count total" data-phase="total"><b>${shown.length}</b> of ${workloads.size} shown</span>` +
    [...counts].map(([phase, n]) =>
      `<span class="count ${esc(phase)}${n ? "" : " zero"}" data-phase="${esc(phase)}"><b>${n}</b> ${esc(phase)}</span>`).join("") +
    `<span class="count failing-pods${failing ? "" : " zero"}" data-phase="failing-pods"><b>${failing}</b> failing pods</span>`;
}

function placeCards() {
  const views = [...workloads.values()].sort(compareViews);
  const shown = [];
  for (const view of views) {
    const card = cardFor(view.key);
    card.hidden = !matches(view);
    if (!card.hidden) shown.push(view);
    main.appendChild(card); // appending an attached node moves it: the DOM order follows the sort
  }
  refreshNamespaces();
  refreshSummary(shown);
  document.getElementById("waiting").hidden = haveSnapshot;
  document.getElementById("empty").hidden = !haveSnapshot || views.length > 0;
  const none = document.getElementById("none-match");
  none.hidden = !views.length || shown.length > 0;
}

// Filters live in the address (#ns=...&q=...): a reload or a shared link keeps them.
function readFilters() {
  const params = new URLSearchParams(location.hash.slice(1));
  filters.namespace = params.get("ns") || "";
  filters.search = params.get("q") || "";
  searchBox.value = filters.search;
}

function writeFilters() {
  const params = new URLSearchParams();
  if (filters.namespace) params.set("ns", filters.namespace);
  if (filters.search) params.set("q", filters.search);
  history.replaceState(null, "", params.toString() ? `#${params}` : location.pathname);
}

namespaceSelect.addEventListener("change", () => { filters.namespace = namespaceSelect.value; writeFilters(); placeCards(); });
searchBox.addEventListener("input", () => { filters.search = searchBox.value.trim(); writeFilters(); placeCards(); });
readFilters();

// A card redrawn between a button's mousedown and mouseup would swallow the click (the pressed
// button is gone): the card under the pointer waits until the press is over.
let pressedKey = null;
const deferred = new Set();

function drawCard(key) {
  const view = workloads.get(key);
  if (!view) return;
  if (key === pressedKey) {
    deferred.add(key);
    return;
  }
  cardFor(key).innerHTML = renderCard(view);
}

main.addEventListener("pointerdown", (event) => { pressedKey = event.target.closest(".card")?.dataset.key ?? null; });
document.addEventListener("pointerup", () => {
  // After the click that this release produces has been dispatched.
  setTimeout(() => {
    pressedKey = null;
    for (const key of deferred) drawCard(key);
    deferred.clear();
  }, 0);
});

function apply(message) {
  clockOffset = message.time - Date.now() / 1000;
  let changed = [];
  if (message.type === "snapshot") {
    haveSnapshot = true;
    for (const key of [...cards.keys()]) removeCard(key);
    changed = message.workloads;
  } else {
    for (const key of message.remove) removeCard(key);
    changed = message.upsert;
  }
  for (const view of changed) {
    workloads.set(view.key, view);
    drawCard(view.key);
  }
  placeCards();
  window.kubeloopDashboard.messages += 1;
}

function showConnection(text, cls) {
  connection.textContent = text;
  connection.className = cls;
}

function connect() {
  let opened = false;
  const source = new EventSource("/api/stream");
  source.onopen = () => { opened = true; showConnection("live", "live"); };
  source.onmessage = (event) => apply(JSON.parse(event.data));
  // Until the stream first opens the page is "connecting" (what it shows is the snapshot the
  // page was served with); a stream that was live and dropped is "reconnecting".
  source.onerror = () => opened ? showConnection("reconnecting", "lost") : showConnection("connecting", "connecting");
}

// The snapshot served inside the page: drawn before the stream is even opened.
function applyEmbedded() {
  const block = document.getElementById("initial-state");
  if (!block) return;
  try {
    apply(JSON.parse(block.textContent));
    window.kubeloopDashboard.embedded = true;
  } catch (error) {
    console.warn("kubeloop dashboard: unreadable embedded snapshot", error);
  }
}

// Time moves on between messages: slide every timeline to "now" once a second.
setInterval(redrawTimelines, 1000);

document.getElementById("zoom").innerHTML = "timeline " + WINDOWS.map((seconds) =>
  `<button data-window="${seconds}" title="${seconds ? `the last ${windowLabel(seconds)}` : "since the server started watching"}">` +
  `${windowLabel(seconds)}</button>`).join("");
document.getElementById("zoom").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-window]");
  if (button) setTimelineWindow(Number(button.dataset.window));
});
// The wheel over a timeline zooms: up (away from you) narrows the window, down widens it.
main.addEventListener("wheel", (event) => {
  if (!event.target.closest(".timeline-box")) return;
  event.preventDefault();
  const finite = WINDOWS.filter(Boolean);
  const index = timelineWindow ? finite.indexOf(timelineWindow) : finite.length;
  const next = Math.min(Math.max(index + (event.deltaY < 0 ? -1 : 1), 0), finite.length);
  setTimelineWindow(next === finite.length ? 0 : finite[next]);
}, { passive: false });
redrawTimelines();

// -- a pod's details: a click on its tile --------------------------------------------------
const details = document.getElementById("details");

function podDetailsHtml(pod) {
  const conditions = pod.conditions.map((c) =>
    `<tr class="cond-${esc(c.status)}"><td>${esc(c.type)}</td><td>${esc(c.status)}</td><td>${esc(c.reason)}</td>` +
    `<td>${esc(c.message)}</td><td>${esc((c.lastTransitionTime || "").slice(11, 19))}</td></tr>`).join("");
  const containers = pod.containers.map((c) =>
    `<tr><td>${esc(c.name)}${c.init ? " <small>(init)</small>" : ""}</td><td>${esc(c.image)}</td>` +
    `<td>${c.ready ? "yes" : "no"}</td><td class="num restarts">${c.restartCount}</td><td>${esc(c.state)}</td>` +
    `<td>${esc(c.lastState)}</td></tr>`).join("");
  const events = pod.events.map((e) =>
    `<tr class="ev-${esc(e.type)}"><td>${esc(e.reason)}</td><td>${esc(e.message)}${e.count > 1 ? ` (x${e.count})` : ""}</td>` +
    `<td>${esc((e.time || "").slice(11, 19))}</td></tr>`).join("");
  return `<button class="close" aria-label="close" title="close (Esc)">&times;</button>` +
    `<h2>${esc(pod.namespace)}/${esc(pod.name)}</h2>` +
    `<p class="facts"><span>phase <b data-field="phase">${esc(pod.phase)}</b></span>` +
    `<span>restarts <b data-field="restarts">${pod.restarts}</b></span>` +
    `<span>node <b>${esc(pod.node || "–")}</b></span>${pod.podIP ? `<span>IP <b>${esc(pod.podIP)}</b></span>` : ""}` +
    `${pod.deleting ? `<span class="deleting">terminating since ${esc(pod.deleting)}</span>` : ""}</p>` +
    `<h3>Conditions</h3>${conditions ? `<table class="conditions">${conditions}</table>` : "<p class='message'>none yet</p>"}` +
    `<h3>Containers</h3><table class="containers"><tr><th>name</th><th>image</th><th>ready</th><th>restarts</th>` +
    `<th>state</th><th>last state</th></tr>${containers}</table>` +
    `<h3>Events</h3>${events ? `<table class="events">${events}</table>` : "<p class='message'>none</p>"}`;
}

async function showPod(namespace, name) {
  details.hidden = false;
  details.dataset.pod = `${namespace}/${name}`;
  details.innerHTML = `<p class="message">loading ${esc(name)}&hellip;</p>`;
  try {
    const response = await fetch(`/api/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`);
    const body = await response.json();
    if (details.dataset.pod !== `${namespace}/${name}`) return; // another tile was clicked meanwhile
    details.innerHTML = response.ok ? podDetailsHtml(body)
      : `<button class="close" aria-label="close">&times;</button><p class="message">${esc(body.message)}</p>`;
  } catch (error) {
    details.innerHTML = `<button class="close" aria-label="close">&times;</button><p class="message">${esc(error)}</p>`;
  }
}

function closeDetails() {
  details.hidden = true;
  delete details.dataset.pod;
}

main.addEventListener("click", (event) => {
  const button = event.target.closest("button.action");
  if (button) {
    act(button.closest(".card").dataset.key, button.dataset.action);
    return;
  }
  const tile = event.target.closest(".tile[data-pod]");
  const card = tile && tile.closest(".card");
  if (!tile || !card) return;
  showPod(workloads.get(card.dataset.key)?.namespace || "", tile.dataset.pod);
});
details.addEventListener("click", (event) => { if (event.target.closest(".close")) closeDetails(); });
document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeDetails(); });

const tokenBox = document.getElementById("token");
tokenBox.value = sessionStorage.getItem(TOKEN_KEY) || "";
// Saved as typed, with no re-rendering: redrawing the cards when the box loses focus would
// replace the very button being clicked between its mousedown and its mouseup.
tokenBox.addEventListener("input", () => {
  const token = tokenBox.value.trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token); else sessionStorage.removeItem(TOKEN_KEY);
});

applyEmbedded();
connect();
