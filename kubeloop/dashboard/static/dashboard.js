// kubeloop dashboard: renders the workload views streamed by /api/stream (server-sent events).
// Each message is a snapshot (all workloads) or a delta (changed and removed workloads); a card
// is re-rendered only when its workload changed. Nothing here writes to the cluster.
"use strict";

const UPDATE_COLOUR = "#2f6fdb";
const OLD_COLOURS = ["#e0892b", "#8e5bd0", "#1aa3a3", "#b8860b", "#c2577a", "#7d8597"];
const UNKNOWN_COLOUR = "#9aa3b5";

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

function revisionColours(view) {
  const colours = new Map();
  let old = 0;
  for (const revision of view.revisions) {
    colours.set(revision.id, revision.isUpdate ? UPDATE_COLOUR : OLD_COLOURS[old++ % OLD_COLOURS.length]);
  }
  return (id) => colours.get(id) || UNKNOWN_COLOUR;
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
      `<span class="tile state-${esc(pod.state)}" style="--rev:${colour(id)}" data-pod="${esc(pod.name)}" ` +
      `data-revision="${esc(id)}" data-state="${esc(pod.state)}" data-update="${revision && revision.isUpdate ? "true" : "false"}" ` +
      `title="${esc(pod.name)}\n${esc(pod.state)}${pod.reason ? ` (${esc(pod.reason)})` : ""}` +
      `${pod.node ? `\non ${esc(pod.node)}` : ""}${pod.restarts ? `\n${pod.restarts} restarts` : ""}"></span>`).join("");
    html += `<div class="revrow" style="--rev:${colour(id)}"><span class="revlabel"><b></b>${esc(label)}` +
      `<small title="${esc(id)}">${esc(revision ? revision.image || id : id)}</small></span>` +
      `<span class="tiles">${tiles || "<small>no pods</small>"}</span></div>`;
  }
  return html || "<p class='message'>no pods</p>";
}

function timelineChart(view, colour) {
  const samples = view.timeline || [];
  if (!samples.length) return "";
  const width = 600, height = 90, pad = 14;
  const t0 = samples[0].t;
  const now = Date.now() / 1000 + clockOffset;
  const span = Math.max(now - t0, samples[samples.length - 1].t - t0, 1);
  const totals = samples.map((s) => Object.values(s.counts).reduce((a, b) => a + b, 0));
  const top = Math.max(view.progress.maxPods, ...totals, 1);
  const x = (t) => pad + ((width - 2 * pad) * (t - t0)) / span;
  const y = (n) => height - pad - ((height - 2 * pad) * n) / top;
  const ids = [...view.revisions.map((r) => r.id).reverse()];
  for (const s of samples) for (const id of Object.keys(s.counts)) if (!ids.includes(id)) ids.unshift(id);
  const base = samples.map(() => 0);
  let paths = "";
  for (const id of ids) {
    const upper = [], lower = [];
    samples.forEach((s, i) => {
      const end = i + 1 < samples.length ? samples[i + 1].t : t0 + span;
      const n = s.counts[id] || 0;
      upper.push(`${x(s.t)},${y(base[i] + n)}`, `${x(end)},${y(base[i] + n)}`);
      lower.push(`${x(s.t)},${y(base[i])}`, `${x(end)},${y(base[i])}`);
      base[i] += n;
    });
    if (upper.length) {
      paths += `<polygon points="${upper.join(" ")} ${lower.reverse().join(" ")}" fill="${colour(id)}" ` +
        `fill-opacity="0.8"><title>${esc(id)}</title></polygon>`;
    }
  }
  const desired = view.progress.desired;
  return `<svg class="timeline" viewBox="0 0 ${width} ${height}" preserveAspectRatio="none">${paths}` +
    `<line x1="${pad}" x2="${width - pad}" y1="${y(desired)}" y2="${y(desired)}" stroke="#1d2330" stroke-dasharray="3 3"/>` +
    `<text x="${pad}" y="10">pods per revision, last ${Math.round(span)} s (dashed: desired ${desired})</text></svg>`;
}

function revisionTable(view, colour) {
  const rows = view.revisions.map((r) =>
    `<tr><td><b style="color:${colour(r.id)}">&#9632;</b> ${r.revision}</td><td>${esc(r.id)}</td>` +
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

function renderCard(view) {
  const colour = revisionColours(view);
  const phase = view.progress.paused ? "paused" : view.rollout.phase;
  return `<h2><span class="kind">${esc(view.kind)}</span>${esc(view.namespace)}/${esc(view.name)}` +
    `<span class="badge ${esc(phase)}">${esc(phase)}</span><small class="kind">${esc(view.strategy)}</small></h2>` +
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

function placeCards() {
  const keys = [...workloads.keys()].sort();
  for (const key of keys) main.appendChild(cardFor(key));
  document.getElementById("waiting").hidden = haveSnapshot;
  document.getElementById("empty").hidden = !haveSnapshot || keys.length > 0;
}

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
    cardFor(view.key).innerHTML = renderCard(view);
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

// Time moves on between messages: stretch every timeline to "now" once a second.
setInterval(() => {
  for (const [key, view] of workloads) {
    const box = cards.get(key)?.querySelector(".timeline-box");
    if (box) box.innerHTML = timelineChart(view, revisionColours(view));
  }
}, 1000);

applyEmbedded();
connect();
