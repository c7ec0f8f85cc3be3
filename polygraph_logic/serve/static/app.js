// polygraph explorer: the deletion state with undo/redo, the live what-if, routing, sidebar and search.
"use strict";

const App = {
  info: null,
  state: {sources: [], relations: [], assertions: [], policy: "trust-all", exact: false, asOf: "", scope: "", require: ""},
  past: [], future: [],
  outcomes: {},          // policy -> outcome JSON of the current state
  sequence: 0,           // the latest what-if request; older answers are dropped
  updates: 0,            // how many times the views were updated (tests wait on it)
  lastRoundTrip: null,   // ms from the click to the updated view
  route: {view: "whatif"},

  main() { return this.outcomes[this.state.policy]; },
  // the status sets of the main policy's outcome: deleted assertions, dead, demoted, touched ids
  // (made once per outcome: every view reads them)
  status() {
    const o = this.main();
    if (!o) return {deleted: new Set(), dead: new Set(), demoted: new Set(), touched: new Set(), uncertain: new Set()};
    if (!o._status) o._status = {deleted: new Set(o.deleted_assertions), dead: new Set(o.dead), touched: new Set(o.touched),
                                 demoted: new Set(o.demoted.map(d => d.artifact)), uncertain: new Set(o.uncertain)};
    return o._status;
  },
  deletionParams() {
    const s = this.state;
    // the view of the evidence (--as-of, --scope) and the kinds required (--require), when set
    return {source: s.sources, relation: s.relations, assertion: s.assertions, exact: s.exact ? "1" : "",
            as_of: s.asOf || "", scope: s.scope || "", require: s.require || ""};
  },
  // a new state from a user action: pushed on the undo stack, then the views update
  change(update, started) {
    this.past.push(JSON.stringify(this.state));
    this.future = [];
    this.state = {...this.state, ...update};
    this.refresh(started);
  },
  undo(started) { this._travel(this.past, this.future, started); },
  redo(started) { this._travel(this.future, this.past, started); },
  _travel(from, to, started) {
    if (!from.length) return;
    to.push(JSON.stringify(this.state));
    this.state = JSON.parse(from.pop());
    this.refresh(started);
  },
  toggle(kind, name, started) {
    const list = this.state[kind];
    this.change({[kind]: list.includes(name) ? list.filter(n => n !== name) : [...list, name]}, started);
  },

  // asks for the what-if of the current state under the chosen policy and deployed vs trust-all
  async refresh(started) {
    started = started ?? performance.now();
    const sequence = ++this.sequence;
    const policies = [...new Set([this.state.policy, "deployed", "trust-all"])];
    const asked = performance.now();
    try {
      // the first rows of the touched table come described; "show more" asks for the others
      const data = await request("/api/whatif", null, {...this.deletionParams(), policy: policies, shown: ROWS_FIRST, lean: "1"});
      if (sequence !== this.sequence) return;
      this.requestMs = performance.now() - asked;
      this.outcomes = Object.fromEntries(data.outcomes.map(o => [o.policy, o]));
      showError(null);
    } catch (error) {
      if (sequence !== this.sequence) return;
      showError(error.message);
    }
    const drawing = performance.now();
    renderControls();
    await renderRoute();
    this.drawMs = performance.now() - drawing;
    requestAnimationFrame(() => setTimeout(() => {
      if (sequence !== this.sequence) return;
      this.lastRoundTrip = performance.now() - started;
      this.updates += 1;
      document.body.dataset.updates = String(this.updates);
      document.body.dataset.roundtrip = this.lastRoundTrip.toFixed(1);
      document.body.dataset.requestMs = this.requestMs.toFixed(1);
      document.body.dataset.drawMs = this.drawMs.toFixed(1);
      const o = this.main();
      clear(document.getElementById("status"),
            o ? `${o.deletion}: ${plural(o.deleted_assertions.length, "assertion")} deleted; policy ${o.policy}` +
                `${o.exact ? " (exact)" : ""}` +
                (o.require ? `; ${plural(o.require.unqualified.length, "standing artifact")} without a support set of ` +
                             `only ${o.require.kinds.join(", ")}` : "") +
                `; what-if ${o.elapsed_ms.toFixed(1)} ms; updated in ${this.lastRoundTrip.toFixed(0)} ms` : "");
    }, 0));
  },
};

function showError(message) {
  const el = document.getElementById("error");
  el.hidden = !message;
  el.textContent = message || "";
}

// --- the sidebar -----------------------------------------------------------------------
const kinds = {source: "sources", relation: "relations"};

async function loadNames(kind) {
  const filter = document.getElementById(`${kind}-filter`).value.trim();
  try {
    const data = await request("/api/names", {kind, prefix: filter, limit: 200});
    App.names = App.names || {};
    App.names[kind] = data;
    renderChecklist(kind);
  } catch (error) { showError(error.message); }
}

// the checkboxes of sources or relations: drawn when the names are loaded (or the switched-off
// names outside the list change); a change of the deletion only ticks and unticks them
const checklists = {};

function renderChecklist(kind) {
  const data = (App.names || {})[kind];
  if (!data) return;
  const off = App.state[kinds[kind]];
  const listed = new Set(data.names.map(n => n.name));
  const extra = off.filter(n => !listed.has(n));
  const inputs = new Map();
  const rows = [...extra.map(n => ({name: n, assertions: null})), ...data.names];
  clear(document.getElementById(kinds[kind]), rows.map(({name, assertions}) => {
    const checked = off.includes(name);
    const input = h("input", {type: "checkbox", [`data-${kind}`]: name, checked,
                              onchange: event => App.toggle(kinds[kind], name, event.timeStamp || performance.now())});
    inputs.set(name, input);
    return h("li", {class: checked ? "off" : ""}, h("label", {}, input,
      h("span", {}, name), assertions === null ? null : h("span", {class: "count"}, assertions)));
  }), data.more ? h("li", {class: "muted"}, "more: type a prefix to filter") : null);
  checklists[kind] = {data, extra: extra.join("\n"), listed, inputs};
}

function syncChecklist(kind) {
  const list = checklists[kind], data = (App.names || {})[kind];
  if (!data) return;
  const off = App.state[kinds[kind]];
  if (!list || list.data !== data || off.filter(n => !list.listed.has(n)).join("\n") !== list.extra) return renderChecklist(kind);
  const offSet = new Set(off);
  for (const [name, input] of list.inputs) {
    const checked = offSet.has(name);
    if (input.checked !== checked) input.checked = checked;
    const li = input.closest("li");
    if (li.classList.contains("off") !== checked) li.classList.toggle("off", checked);
  }
}

let chipsKey = null;

function renderControls() {
  const s = App.state;
  document.getElementById("policy").value = s.policy;
  document.getElementById("exact").checked = s.exact;
  for (const [id, key] of [["as-of", "asOf"], ["scope", "scope"], ["require", "require"]]) {
    const input = document.getElementById(id);
    if (document.activeElement !== input && input.value !== (s[key] || "")) input.value = s[key] || "";
  }
  document.getElementById("undo").disabled = !App.past.length;
  document.getElementById("redo").disabled = !App.future.length;
  syncChecklist("source");
  syncChecklist("relation");
  const chips = [...s.sources.map(n => ["sources", n]), ...s.relations.map(n => ["relations", n]),
                 ...s.assertions.map(n => ["assertions", n])];
  const key = JSON.stringify(chips);
  if (key === chipsKey) return;
  chipsKey = key;
  clear(document.getElementById("switched-off"), chips.length ? h("div", {class: "muted"}, "switched off (click to restore):") : null,
        chips.map(([kind, name]) => h("span", {class: "chip", "data-off": name, title: kind.slice(0, -1),
                                               onclick: e => App.toggle(kind, name, e.timeStamp)}, name)));
}

async function pasteApply(event) {
  const started = event.timeStamp;
  const text = document.getElementById("paste").value;
  try {
    const found = await request("/api/resolve", null, {names: text});
    const union = (a, b) => [...new Set([...a, ...b])];
    const report = `${plural(found.sources.length, "source")}, ${plural(found.relations.length, "relation")}, ` +
                   `${plural(found.assertions.length, "assertion")} switched off` +
                   (found.unknown.length ? `; not in this graph: ${found.unknown.slice(0, 20).join(", ")}` +
                                           (found.unknown.length > 20 ? ` and ${found.unknown.length - 20} more` : "") : "");
    document.getElementById("paste-report").textContent = report;
    App.change({sources: union(App.state.sources, found.sources), relations: union(App.state.relations, found.relations),
                assertions: union(App.state.assertions, found.assertions)}, started);
  } catch (error) { showError(error.message); }
}

// --- search with completion ------------------------------------------------------------
let searchTimer = null, searchItems = [], searchActive = -1;

async function complete() {
  const q = document.getElementById("search").value.trim();
  const box = document.getElementById("completions");
  if (!q) { box.hidden = true; return; }
  try {
    const data = await request("/api/search", {q, limit: 8});
    if (data.query !== document.getElementById("search").value.trim()) return;
    searchItems = [];
    const section = (title, entries, make) => entries.length ? [h("h4", {}, title), entries.map(e => {
      const [label, detail, go] = make(e);
      const item = h("div", {class: "item", "data-kind": title.toLowerCase(), "data-value": label,
                             onmousedown: ev => { ev.preventDefault(); choose(go); }},
                     h("span", {}, label), h("span", {class: "muted"}, detail));
      searchItems.push([item, go]);
      return item;
    })] : [];
    searchActive = -1;
    clear(box,
      section("Artifacts", data.artifacts, a => [a.id, truncate(a.text, 70), () => { location.hash = artifactHref(a.id); }]),
      section("Entities", data.entities, e => [e, "entity", () => { location.hash = entityHref(e); }]),
      section("Sources", data.sources, s => [s.name, `${plural(s.assertions, "assertion")}: switch off`,
                                               () => App.toggle("sources", s.name)]),
      section("Relations", data.relations, r => [r.name, `${plural(r.assertions, "assertion")}: revoke`,
                                                   () => App.toggle("relations", r.name)]));
    box.hidden = !searchItems.length;
    if (!searchItems.length) clear(box);
  } catch (error) { showError(error.message); }
}

function choose(go) {
  document.getElementById("completions").hidden = true;
  document.getElementById("search").blur();
  go();
}

function searchKeys(event) {
  if (!searchItems.length) return;
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    event.preventDefault();
    searchActive = (searchActive + (event.key === "ArrowDown" ? 1 : -1) + searchItems.length) % searchItems.length;
    searchItems.forEach(([item], i) => item.classList.toggle("active", i === searchActive));
  } else if (event.key === "Enter") {
    choose(searchItems[Math.max(searchActive, 0)][1]);
  } else if (event.key === "Escape") {
    document.getElementById("completions").hidden = true;
  }
}

// --- routing: #/whatif, #/artifact/ID, #/entity/NAME, #/top -------------------------------
function parseRoute() {
  const [, view, ...rest] = location.hash.split("/");
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
  return ["artifact", "entity", "top"].includes(view) ? {view, arg} : {view: "whatif"};
}

async function renderRoute() {
  const route = App.route = parseRoute();
  for (const name of ["whatif", "artifact", "entity", "top"]) document.getElementById(`view-${name}`).hidden = name !== route.view;
  document.getElementById("nav-whatif").classList.toggle("active", route.view === "whatif");
  document.getElementById("nav-top").classList.toggle("active", route.view === "top");
  try {
    await Views[route.view](document.getElementById(`view-${route.view}`), route.arg);
  } catch (error) { showError(error.message); }
}

async function start() {
  App.info = await request("/api/info");
  document.getElementById("graph-name").textContent =
    `${App.info.file}: ${plural(App.info.artifacts, "artifact")} over ${plural(App.info.assertions, "assertion")} from ${plural(App.info.sources, "source")}`;
  const version = App.info.at ? `version ${App.info.at} of ${App.info.latest} (--at ${App.info.at})`
    : `version ${App.info.version}${App.info.latest > 1 ? " (latest)" : ""}`;
  const history = (App.info.versions || []).map(v => `${v.version}: ${v.action}${v.time ? ` ${v.time}` : ""}`).join("\n");
  document.getElementById("graph-name").append(h("span", {id: "graph-version", class: `badge${App.info.at ? " trimmed" : ""}`,
                                                          title: history}, version));
  const policy = document.getElementById("policy");
  clear(policy, App.info.policies.map(p => h("option", {value: p}, p)));
  policy.addEventListener("change", e => App.change({policy: policy.value}, e.timeStamp));
  document.getElementById("exact").addEventListener("change", e => App.change({exact: e.target.checked}, e.timeStamp));
  for (const [id, key] of [["as-of", "asOf"], ["scope", "scope"], ["require", "require"]]) {
    document.getElementById(id).addEventListener("change", e => App.change({[key]: e.target.value.trim()}, e.timeStamp));
  }
  document.getElementById("undo").addEventListener("click", e => App.undo(e.timeStamp));
  document.getElementById("redo").addEventListener("click", e => App.redo(e.timeStamp));
  document.getElementById("clear").addEventListener("click",
    e => App.change({sources: [], relations: [], assertions: []}, e.timeStamp));
  document.getElementById("paste-apply").addEventListener("click", pasteApply);
  for (const kind of Object.keys(kinds)) {
    let timer = null;
    document.getElementById(`${kind}-filter`).addEventListener("input", () => {
      clearTimeout(timer); timer = setTimeout(() => loadNames(kind), 120);
    });
  }
  const search = document.getElementById("search");
  search.addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(complete, 120); });
  search.addEventListener("keydown", searchKeys);
  search.addEventListener("blur", () => setTimeout(() => { document.getElementById("completions").hidden = true; }, 150));
  window.addEventListener("hashchange", () => renderRoute());
  await Promise.all([loadNames("source"), loadNames("relation")]);
  await App.refresh();
}

start().catch(error => showError(`cannot start: ${error.message}`));
