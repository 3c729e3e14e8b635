// The catalog browser: schemas, tables and views at any version or time, a table's columns (nested
// fields as a tree under their column), keys, indexes and schema versions, a view's query per
// dialect and versions, a version timeline in words, a diff between versions, the retention leases,
// the warehouse that pins Iceberg engines to the moment shown, and live updates from the
// server-sent event stream. Plain JavaScript, no dependencies, served by the API.
"use strict";

const state = { mode: "latest", value: "", token: sessionStorage.getItem("catalog-token") || "", latest: null };

const $ = (selector) => document.querySelector(selector);
const esc = (value) =>
  String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const pinParams = () =>
  state.mode === "version" ? `version=${encodeURIComponent(state.value)}`
    : state.mode === "at" ? `at=${encodeURIComponent(state.value)}` : "";
const withPin = (path) => (pinParams() ? `${path}${path.includes("?") ? "&" : "?"}${pinParams()}` : path);
const hlcTime = (ts) => new Date(Number(BigInt(ts) >> 16n)).toISOString();
// A table's current columns and schema version are its last entry of ``versions``.
const current = (t) => t.versions[t.versions.length - 1];
// The page names itself to the server, which records the client with each change it makes.
const headers = () => ({ "Catalog-Client": "browser", ...(state.token ? { Authorization: `Bearer ${state.token}` } : {}) });

class ApiError extends Error {}

async function api(path) {
  const response = await fetch(path, { headers: headers() });
  if (response.status === 401) $("#token-form").classList.remove("hidden");
  const body = await response.json();
  if (!response.ok) throw new ApiError(`${body.code}: ${body.detail}`);
  return body;
}

// A column's type as the page spells it: a STRUCT is summed up as STRUCT<…> (its fields are rows
// of their own), an ARRAY or a MAP shows the types it holds.
function typeName(c) {
  const fields = c.fields || [];
  if (c.type === "STRUCT") return "STRUCT<…>";
  if (c.type === "ARRAY" && fields.length === 1) return `ARRAY<${typeName(fields[0])}>`;
  if (c.type === "MAP" && fields.length === 2) return `MAP<${typeName(fields[0])}, ${typeName(fields[1])}>`;
  if (c.type === "DECIMAL") return `DECIMAL(${c.precision}, ${c.scale})`;
  if (c.type === "STRING" || c.type === "BYTES") return `${c.type}(${c.length})`;
  if (c.type.startsWith("TIME")) return `${c.type}(${c.precision})`;
  return c.type;
}

function pinLabel(cat) {
  return `version ${cat.version}, active since ${hlcTime(cat.activation_ts)}`;
}

async function showTables() {
  const cat = await api(withPin("/v1/catalog"));
  const schemas = Object.fromEntries(cat.schemas.map((s) => [s.id, s.name]));
  const zones = Object.fromEntries(cat.zones.map((z) => [z.id, z.name]));
  const rows = cat.tables
    .map((t) => {
      const schema = schemas[t.schema_id];
      const href = `#/table/${encodeURIComponent(schema)}/${encodeURIComponent(t.name)}`;
      return `<tr data-testid="table-row"><td>${esc(schema)}</td><td><a href="${href}">${esc(t.name)}</a></td>
        <td>${current(t).columns.length}</td><td>${current(t).version}</td><td>${esc(zones[t.zone_id])}</td></tr>`;
    })
    .join("");
  const pinned = state.mode === "latest" ? "" : `<p data-testid="engine-pin">Iceberg engines read this catalog as of this moment
    with the warehouse <code>catalog@v${cat.version}</code> (or <code>catalog@${esc(hlcTime(cat.activation_ts))}</code>):
    every table exactly as then.</p>`;
  const views = (cat.views || [])
    .map((v) => {
      const schema = schemas[v.schema_id];
      const href = `#/view/${encodeURIComponent(schema)}/${encodeURIComponent(v.name)}`;
      const shown = v.versions.find((x) => x.version_id === v.current_version_id);
      return `<tr data-testid="view-row"><td>${esc(schema)}</td><td><a href="${href}">${esc(v.name)}</a></td>
        <td>${esc(shown.representations.map((r) => r.dialect).join(", "))}</td><td>${v.current_version_id}</td></tr>`;
    })
    .join("");
  return `<h1 data-testid="title">Catalog <span class="muted">${esc(pinLabel(cat))}</span></h1>${pinned}
    <h2>Schemas</h2><p data-testid="schemas">${cat.schemas.map((s) => `<span class="badge">${esc(s.name)}</span>`).join(" ")}</p>
    <h2>Tables</h2>
    <table data-testid="tables"><tr><th>schema</th><th>table</th><th>columns</th><th>schema version</th><th>zone</th></tr>
    ${rows || '<tr><td colspan="5" class="muted">no tables</td></tr>'}</table>
    <h2>Views</h2>
    <table data-testid="views"><tr><th>schema</th><th>view</th><th>dialects</th><th>version</th></tr>
    ${views || '<tr><td colspan="4" class="muted">no views</td></tr>'}</table>`;
}

// A view: its current query in each dialect (as written, never run here), its columns and
// the versions it keeps, at the version or time the page shows.
async function showView(schema, name) {
  const body = await api(withPin(`/v1/schemas/${segment(schema)}/views/${segment(name)}`));
  const v = body.view;
  const shown = v.versions.find((x) => x.version_id === v.current_version_id);
  const columns = v.schemas.find((x) => x.schema_id === shown.schema_id).columns
    .map((c) => `<tr data-testid="view-column"><td>${esc(c.name)}</td><td><code>${esc(typeName(c))}</code></td><td>${esc(c.doc || "")}</td></tr>`)
    .join("");
  const queries = shown.representations
    .map((r) => `<h3>${esc(r.dialect)}</h3><pre data-testid="view-query">${esc(r.sql)}</pre>`)
    .join("");
  const versions = [...v.versions]
    .reverse()
    .map((x) => `<li data-testid="view-version">v${x.version_id}${x.version_id === v.current_version_id ? " (current)" : ""}, made ${esc(new Date(x.timestamp_ms).toISOString())}: ${esc(x.representations.map((r) => r.dialect).join(", "))}</li>`)
    .join("");
  return `<h1 data-testid="title">${esc(schema)}.${esc(v.name)} <span class="muted">view ${v.id}, version ${v.current_version_id}; catalog version ${body.version}</span></h1>
    <p>Its names resolve in <code>${esc(shown.default_namespace.join("."))}</code>.</p>
    <h2>Query</h2>${queries}
    <h2>Columns</h2><table data-testid="view-columns"><tr><th>column</th><th>type</th><th>comment</th></tr>${columns}</table>
    <h2>Versions</h2><ul data-testid="view-versions">${versions}</ul>`;
}

// The nested fields of a STRUCT, ARRAY or MAP column, as an indented tree under it: each with its
// id, its path (``PAYLOAD.ITEMS.element.PRICE``) and its type. Nested fields take no default.
function fieldRows(fields, prefix) {
  return (fields || [])
    .map((f) => {
      const path = [...prefix, f.name];
      const indent = `${'<span class="indent"></span>'.repeat(prefix.length - 1)}<span class="indent branch"></span>`;
      return `<tr data-testid="field-row" data-path="${esc(path.join("."))}" class="field"><td>${f.id}</td>
        <td>${indent}<span class="muted">${esc(prefix.join("."))}.</span>${esc(f.name)}</td><td><code>${esc(typeName(f))}</code></td>
        <td>${f.nullable ? "yes" : "NOT NULL"}</td><td></td><td></td></tr>${fieldRows(f.fields, path)}`;
    })
    .join("");
}

function columnsTable(table, columns) {
  const key = new Set(table.primary_key);
  const colocated = new Set(table.colocation_columns);
  const rows = columns
    .map(
      (c) => `<tr data-testid="column-row"><td>${c.id}</td><td>${esc(c.name)}</td><td><code>${esc(typeName(c))}</code></td>
      <td>${c.nullable ? "yes" : "NOT NULL"}</td><td>${c.default_function ? `<code>${esc(c.default_function)}()</code>` : c.default === null || c.default === undefined ? "" : `<code>${esc(JSON.stringify(c.default))}</code>`}</td>
      <td>${key.has(c.id) ? "PK" : ""}${colocated.has(c.id) ? " colocation" : ""}</td></tr>${fieldRows(c.fields, [c.name])}`,
    )
    .join("");
  return `<table data-testid="columns"><tr><th>id</th><th>column</th><th>type</th><th>nullable</th><th>default</th><th>key</th></tr>${rows}</table>`;
}

// The most recent schema versions the table page lists (the answer pages them).
const SHOWN_SCHEMA_VERSIONS = 20;

// A path segment names an object as typed in SQL (unquoted names fold to upper case), so the
// exact names the page holds travel double-quoted.
const segment = (exact) => encodeURIComponent(`"${exact.replaceAll('"', '""')}"`);

async function showTable(schema, name) {
  const path = `/v1/schemas/${segment(schema)}/tables/${segment(name)}`;
  const body = await api(withPin(path));
  const t = body.table;
  const from = Math.max(1, current(t).version - SHOWN_SCHEMA_VERSIONS + 1);
  const history = await api(withPin(`${path}/schema-versions?from=${from}&limit=${SHOWN_SCHEMA_VERSIONS}`));
  const columns = current(t).columns;
  const names = Object.fromEntries(columns.map((c) => [c.id, c.name]));
  const indexes = body.indexes
    .map(
      (i) => `<tr data-testid="index-row"><td>${esc(i.name)}</td><td>${esc(i.kind)}${i.unique ? " unique" : ""}</td>
      <td>${esc((i.columns || []).map((c) => names[c.column_id ?? c] ?? c.column_id ?? c).join(", "))}</td>
      <td><span class="badge" data-testid="index-status">${esc(i.status)}</span></td></tr>`,
    )
    .join("");
  const older = from > 1 ? `<li class="muted">and ${from - 1} older</li>` : "";
  const versions = [...history.schema_versions]
    .reverse()
    .map((v) => `<li data-testid="schema-version">v${v.version}: ${v.columns.map((c) => `${esc(c.name)} <code>${esc(typeName(c))}</code>`).join(", ")}</li>`)
    .join("");
  return `<h1 data-testid="title">${esc(schema)}.${esc(t.name)} <span class="muted">table ${t.id}, schema version ${current(t).version}; catalog ${esc(pinLabel(body))}</span></h1>
    <p>Zone <span class="badge">${esc(body.zone.name)}</span> with ${body.zone.partitions} partitions, ${body.zone.replicas} replicas.
    Primary key: ${t.primary_key.length ? `<code>${esc(t.primary_key.map((id) => names[id]).join(", "))}</code>` : "none (rows may repeat)"}</p>
    <p>Data in <code data-testid="location">${esc(t.location || "the warehouse each job names (no location recorded)")}</code></p>
    <h2>Columns</h2>${columnsTable(t, columns)}
    <h2>Indexes</h2><table data-testid="indexes"><tr><th>index</th><th>kind</th><th>columns</th><th>status</th></tr>
    ${indexes || '<tr><td colspan="4" class="muted">no indexes</td></tr>'}</table>
    <h2>Schema versions</h2><ul data-testid="schema-versions">${versions}${older}</ul>`;
}

// Who asked for one request of a version, from which client, and why.
const originLine = (o) =>
  `<div data-testid="version-origin">${esc(o.principal)} <span class="muted">via ${esc(o.client)}</span>${o.message ? `: ${esc(o.message)}` : ""}</div>`;

async function showTimeline() {
  const body = await api("/v1/versions?limit=10000");
  const items = body.versions;
  const times = items.map((v) => Number(BigInt(v.activation_ts) >> 16n));
  const low = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - low);
  const dots = items
    .map((v, i) => {
      const x = 20 + ((times[i] - low) / span) * 960;
      return `<circle cx="${x.toFixed(1)}" cy="40" r="5"><title>v${v.version} ${hlcTime(v.activation_ts)}</title></circle>
        <text x="${x.toFixed(1)}" y="62" text-anchor="middle">${v.version}</text>`;
    })
    .join("");
  const rows = [...items]
    .reverse()
    .map(
      (v) => `<tr data-testid="version-row"><td>${v.version}</td><td>${hlcTime(v.activation_ts)}</td>
      <td title="${esc(v.entries.join(", "))}">${(v.changes || []).map((c) => `<div data-testid="version-change">${esc(c)}</div>`).join("") || '<span class="muted">snapshot</span>'}</td>
      <td>${(v.origins || []).map(originLine).join("")}</td>
      <td><a href="#/diff?from=${Math.max(body.earliest, v.version - 1)}&to=${v.version}">diff</a></td></tr>`,
    )
    .join("");
  return `<h1 data-testid="title">Timeline <span class="muted">versions ${body.earliest}..${body.latest}</span></h1>
    <svg class="timeline" viewBox="0 0 1000 90" preserveAspectRatio="none" data-testid="timeline-chart">
      <line x1="10" y1="40" x2="990" y2="40" stroke="#dde1ea"/>${dots}</svg>
    <table data-testid="versions"><tr><th>version</th><th>active from</th><th>changes</th><th>who and why</th><th></th></tr>${rows}</table>`;
}

// One property that moved: "status REGISTERED → BUILDING".
const moved = (f) => `${esc(f.field)} <code>${esc(JSON.stringify(f.before))}</code> → <code>${esc(JSON.stringify(f.after))}</code>`;

// What an object's change holds: an altered one lists only the properties and the columns that
// changed; an added or dropped one shows the object itself, folded.
function changeDetail(c) {
  if (c.change !== "altered") {
    const whole = c.after ?? c.before;
    const summary = whole.versions ? `${current(whole).columns.length} columns` : "details";
    return `<details><summary>${summary}</summary><pre class="mono">${esc(JSON.stringify(whole, null, 2))}</pre></details>`;
  }
  const fields = c.fields.map((f) => `<div data-testid="field-change">${moved(f)}</div>`);
  const columns = c.columns.map((col) => {
    const sign = { added: "+", dropped: "−", altered: "~" }[col.change];
    const what = col.change === "altered"
      ? col.fields.map(moved).join(", ")
      : `<code>${esc(typeName(col.after ?? col.before))}</code>`;
    return `<div data-testid="column-change" class="${esc(col.change)}">${sign} column ${esc(col.name)}: ${what}</div>`;
  });
  return [...fields, ...columns].join("");
}

async function showDiff(query) {
  const latest = state.latest ?? (await api("/v1/versions?limit=1")).latest;
  const from = Number(query.get("from") || Math.max(1, latest - 1));
  const to = Number(query.get("to") || latest);
  const form = `<form id="diff-form" data-testid="diff-form">from <input name="from" value="${from}" size="5">
    to <input name="to" value="${to}" size="5"> <button type="submit">compare</button></form>`;
  const body = await api(`/v1/diff?from=${from}&to=${to}`);
  const rows = body.changes
    .map(
      (c) => `<tr data-testid="change-row"><td>${esc(c.object_type)}</td><td>${esc(c.name)}</td>
      <td class="${esc(c.change)}">${esc(c.change)}</td><td>${changeDetail(c)}</td></tr>`,
    )
    .join("");
  return `<h1 data-testid="title">Diff ${from} → ${to}</h1>${form}
    <table data-testid="changes"><tr><th>object</th><th>name</th><th>change</th><th>what changed</th></tr>
    ${rows || '<tr><td colspan="4" class="muted">no changes</td></tr>'}</table>`;
}

async function showLeases() {
  const body = await api("/v1/leases");
  const rows = body.leases
    .map(
      (l) => `<tr data-testid="lease-row"><td><code>${esc(l.id)}</code></td><td>${esc(hlcTime(l.at))}</td>
      <td>${esc(l.owner)}</td><td>${esc(l.principal)}</td><td>${esc(new Date(l.expires_ms).toISOString())}</td></tr>`,
    )
    .join("");
  return `<h1 data-testid="title">Leases <span class="muted">what compaction and data expiry keep for readers</span></h1>
    <table data-testid="leases"><tr><th>id</th><th>keeps reads as of</th><th>owner</th><th>taken by</th><th>ends</th></tr>
    ${rows || '<tr><td colspan="5" class="muted">no leases hold</td></tr>'}</table>`;
}

async function render() {
  const [path, search] = (location.hash.slice(1) || "/").split("?");
  const query = new URLSearchParams(search || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const main = $("#main");
  try {
    let html;
    if (parts[0] === "table" && parts.length === 3) html = await showTable(parts[1], parts[2]);
    else if (parts[0] === "view" && parts.length === 3) html = await showView(parts[1], parts[2]);
    else if (parts[0] === "timeline") html = await showTimeline();
    else if (parts[0] === "diff") html = await showDiff(query);
    else if (parts[0] === "leases") html = await showLeases();
    else html = await showTables();
    main.innerHTML = html;
    const diffForm = $("#diff-form");
    if (diffForm) {
      diffForm.addEventListener("submit", (event) => {
        event.preventDefault();
        const data = new FormData(diffForm);
        location.hash = `#/diff?from=${data.get("from")}&to=${data.get("to")}`;
      });
    }
  } catch (error) {
    main.innerHTML = `<p class="error" data-testid="error">${esc(error.message)}</p>`;
  }
}

// Live updates: read the event stream with fetch (so the bearer token travels), re-render the
// page when it shows the latest catalog, reconnect from the last event id after a drop.
async function follow() {
  let lastId = null;
  for (;;) {
    try {
      const start = lastId ? {} : { from_version: (await api("/v1/versions?limit=1")).latest + 1 };
      const url = `/v1/events${start.from_version ? `?from_version=${start.from_version}` : ""}`;
      setLive(state.latest);
      const response = await fetch(url, { headers: { ...headers(), ...(lastId ? { "Last-Event-ID": lastId } : {}) } });
      if (!response.ok) throw new Error(`events: ${response.status}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const id = frame.split("\n").find((line) => line.startsWith("id:"));
          if (!id) continue;
          lastId = id.slice(3).trim();
          onVersion(Number(lastId.split(".")[0]));
        }
      }
    } catch (error) {
      setLive(null);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

let pending = null;
function onVersion(version) {
  if (state.latest !== null && version <= state.latest) return;
  state.latest = version;
  setLive(version);
  if (state.mode !== "latest" || pending) return;
  pending = setTimeout(() => {
    pending = null;
    render();
  }, 150);
}

function setLive(version) {
  const live = $("#live");
  live.classList.toggle("off", version === null);
  live.textContent = version === null ? "offline" : `live · v${version}`;
}

$("#pin").addEventListener("submit", (event) => {
  event.preventDefault();
  state.mode = $("#pin-mode").value;
  state.value = $("#pin-value").value.trim();
  render();
});
$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("#token").value.trim();
  sessionStorage.setItem("catalog-token", state.token);
  $("#token-form").classList.add("hidden");
  render();
});
window.addEventListener("hashchange", render);
(async () => {
  try {
    state.latest = (await api("/v1/versions?limit=1")).latest;
  } catch (error) {
    /* shown by render */
  }
  await render();
  follow();
})();
