// polygraph explorer: the views (what-if, artifact, entity, top sources), rendered from App's state.
"use strict";

const LAYERS = ["claim", "merge", "edge", "summary", "sentence", "contradiction"];
const artifactCache = new Map();

function statusOf(id, status) {
  if (status.dead.has(id)) return "dead";
  if (status.demoted.has(id)) return "demoted";
  return status.touched.has(id) ? "kept" : "alive";
}

// --- the what-if view: built once, then updated in place -----------------------------------
// A change of the deletion or the policy touches only what differs: bar widths and counters,
// the status of rows already drawn, the summaries that enter or leave. At most ROWS_FIRST
// touched artifacts are drawn up front (dead first); "show more" draws ROWS_MORE more.
const ROWS_FIRST = 200, ROWS_MORE = 1000, SUMMARIES_FIRST = 50;
const descriptions = new Map();   // artifact id -> one-line description (fixed for the graph)

function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
function setAttr(el, name, value) { value = String(value); if (el.getAttribute(name) !== value) el.setAttribute(name, value); }

const WhatifView = {
  el: null,
  columns: new Map(),     // policy -> {el, title, rows: {layer -> {bar, dead, demoted, kept, counts}}, uncertain}
  summaries: new Map(),   // summary id -> {el, badge, note, items: Map sentence id -> li}
  rows: new Map(),        // artifact id -> tr (kept while drawn, reused when it comes back)
  shown: ROWS_FIRST, summariesShown: SUMMARIES_FIRST, order: [], outcome: null,

  build(el) {
    this.el = el;
    this.side = h("div", {class: "columns", id: "side-by-side"});
    this.demotedNote = h("p", {class: "muted", hidden: true});
    this.summaryList = h("div", {});
    this.summariesMore = h("button", {type: "button", id: "summaries-more", hidden: true,
                                      onclick: () => { this.summariesShown += SUMMARIES_FIRST * 4; this.drawSummaries(); }});
    this.summariesCard = h("div", {class: "card", id: "summaries", hidden: true},
      h("h3", {}, "Summaries, trimmed sentence by sentence"), this.summaryList, this.summariesMore);
    this.touchedTitle = h("span", {});
    this.touchedNote = h("span", {class: "muted"});
    this.tbodies = [];
    this.table = h("table", {id: "touched", hidden: true},
      h("colgroup", {}, h("col", {style: "width:110px"}), h("col", {style: "width:104px"}), h("col", {style: "width:190px"}), h("col", {})),
      h("thead", {}, h("tr", {}, h("th", {}, "status"), h("th", {}, "layer"), h("th", {}, "artifact"), h("th", {}, "content"))));
    this.nothing = h("p", {class: "muted"}, "Nothing is touched: switch off a source, a relation or an assertion on the left.");
    this.more = h("button", {type: "button", id: "touched-more", hidden: true, onclick: () => this.showMore()});
    this.format = h("select", {id: "export-format"}, App.info.formats.map(f => h("option", {value: f}, f)));
    this.json = link("#", "what-if JSON", {id: "download-json", download: ""});
    this.rdf = link("#", "RDF export", {id: "download-rdf", download: ""});
    this.format.addEventListener("change", () => this.drawDownloads());
    this.heading = h("h2", {}, "What stands and what falls");
    clear(el, this.heading,
      h("div", {class: "legend muted"}, "bars: touched artifacts per layer:",
        h("span", {style: "background:var(--killed)"}), "dead", h("span", {style: "background:var(--demoted)"}), "demoted",
        h("span", {style: "background:var(--kept)"}), "kept"),
      this.side, this.demotedNote, this.summariesCard,
      h("div", {class: "card"}, h("h3", {}, this.touchedTitle, this.touchedNote), this.table, this.nothing, this.more),
      h("div", {class: "card"}, h("h3", {}, "Downloads"), this.json,
        " (as polygraph whatif --json --list prints it) · ", this.rdf, " of the cleaned graph in ", this.format,
        " (every artifact's status; the deletion invalidates the dead ones)"));
  },

  // brings the view up to the current outcomes (a new what-if draws the first rows only again)
  update(el) {
    if (this.el !== el || el.firstChild !== this.heading) this.build(el);
    const main = App.main();
    if (main !== this.outcome) { this.shown = ROWS_FIRST; this.summariesShown = SUMMARIES_FIRST; }
    this.outcome = main;
    this.drawColumns();
    this.demotedNote.hidden = !main.demoted.length;
    if (main.demoted.length) setText(this.demotedNote, `${plural(main.demoted.length, "claim")} demoted: every stating ` +
      "assertion is deleted, but the rules still entail the triple (it stands as an edge)");
    this.drawSummaries();
    this.drawRows();
    this.drawDownloads();
  },

  drawColumns() {
    const policies = [...new Set([App.state.policy, "deployed", "trust-all"])];
    const outcomes = policies.map(p => App.outcomes[p]).filter(Boolean);
    const scale = Math.max(1, ...outcomes.flatMap(o => Object.values(o.by_layer).map(c => c.touched)));
    const pct = n => `${(100 * n / scale).toFixed(3)}%`;
    const wanted = outcomes.map(o => {
      let column = this.columns.get(o.policy);
      if (!column) this.columns.set(o.policy, column = this.makeColumn(o.policy));
      const main = o.policy === App.state.policy;
      column.el.classList.toggle("main", main);
      setText(column.chosen, main ? " (chosen)" : "");
      for (const [layer, row] of Object.entries(column.rows)) {
        const c = o.by_layer[layer] || {touched: 0, dead: 0, kept: 0};
        const demoted = c.demoted || 0;
        setAttr(row.bar, "title", `${c.touched} touched of ${App.info.layers[layer]}`);
        row.dead.style.width = pct(c.dead);
        row.demoted.style.width = pct(demoted);
        row.kept.style.width = pct(c.kept - demoted);
        setAttr(row.counts, "data-dead", c.dead);
        setAttr(row.counts, "data-touched", c.touched);
        setText(row.counts, `${c.dead} dead · ${c.kept} kept / ${c.touched}`);
      }
      const n = o.brief ? o.uncertain : o.uncertain.length;
      column.uncertain.hidden = !n;
      setText(column.uncertain, n ? `${plural(n, "dead verdict")} on capped labels; "exact" settles them` : "");
      return column.el;
    });
    const current = [...this.side.children];
    if (current.length !== wanted.length || current.some((c, i) => c !== wanted[i])) this.side.replaceChildren(...wanted);
  },

  makeColumn(policy) {
    const rows = {};
    const chosen = h("span", {});
    const uncertain = h("div", {class: "muted", hidden: true});
    const el = h("div", {class: "policy-column", "data-policy": policy}, h("h3", {}, policy, chosen),
      LAYERS.filter(l => App.info.layers[l]).map(layer => {
        const row = rows[layer] = {dead: h("div", {class: "dead"}), demoted: h("div", {class: "demoted"}),
                                   kept: h("div", {class: "kept"}), counts: h("span", {class: "counts"})};
        row.bar = h("div", {class: "bar"}, row.dead, row.demoted, row.kept);
        return h("div", {class: "bar-row", "data-layer": layer}, h("span", {}, layer), row.bar, row.counts);
      }), uncertain);
    return {el, chosen, rows, uncertain};
  },

  drawSummaries() {
    const o = this.outcome;
    const entries = Object.entries(o.summaries);
    this.summariesCard.hidden = !entries.length;
    const wanted = entries.slice(0, this.summariesShown).map(([id, entry]) => {
      let card = this.summaries.get(id);
      if (!card) this.summaries.set(id, card = this.makeSummary(id, o.summary_sentences[id] || []));
      setText(card.badge, entry.status);
      setAttr(card.badge, "class", `badge ${entry.status}`);
      setText(card.note, ` ${entry.dead_sentences} of ${entry.sentences} sentences dead`);
      for (const s of o.summary_sentences[id] || []) {
        const li = card.items.get(s.id);
        if (li && li.classList.contains("dead") !== s.dead) li.classList.toggle("dead", s.dead);
      }
      return card.el;
    });
    const current = [...this.summaryList.children];
    if (current.length !== wanted.length || current.some((c, i) => c !== wanted[i])) this.summaryList.replaceChildren(...wanted);
    const rest = entries.length - wanted.length;
    this.summariesMore.hidden = rest <= 0;
    if (rest > 0) setText(this.summariesMore, `show more (${rest.toLocaleString()} more summaries)`);
    if (this.summaries.size > 2000) for (const id of [...this.summaries.keys()]) if (!(id in o.summaries)) this.summaries.delete(id);
  },

  makeSummary(id, sentences) {
    const items = new Map();
    const badge = h("span", {class: "badge"});
    const note = h("span", {class: "muted"});
    const el = h("div", {class: "summary", "data-id": id}, h("div", {}, link(artifactHref(id), id), " ", badge, note),
      h("ul", {}, sentences.map(s => { const li = h("li", {"data-id": s.id}, s.text); items.set(s.id, li); return li; })));
    return {el, badge, note, items};
  },

  // the touched artifacts in display order: dead first (what changes), then the rest
  ordered() {
    const o = this.outcome, dead = App.status().dead;
    return [...o.touched.filter(id => dead.has(id)), ...o.touched.filter(id => !dead.has(id))];
  },

  drawRows() {
    const o = this.outcome, status = App.status();
    for (const [id, text] of Object.entries(o.described || {})) descriptions.set(id, text);
    const order = this.order = this.ordered();
    const ids = order.slice(0, this.shown).filter(id => descriptions.has(id));
    setText(this.touchedTitle, `Touched artifacts under ${o.policy}`);
    setText(this.touchedNote, ids.length < order.length ? ` (first ${ids.length} of ${order.length}, dead first)` : "");
    this.table.hidden = !ids.length;
    this.nothing.hidden = ids.length > 0;
    const uncertain = status.uncertain;
    const drawn = new Set(ids);
    for (const id of this.rows.keys()) if (!drawn.has(id)) this.rows.delete(id);
    const rows = ids.map(id => {
      const s = statusOf(id, status);
      const label = uncertain.has(id) ? `${s} (uncertain)` : s;
      let tr = this.rows.get(id);
      if (!tr) {
        tr = h("tr", {"data-id": id}, h("td", {class: "status-cell"}), h("td", {}, id.split(":")[0]),
               h("td", {}, link(artifactHref(id), id)), h("td", {}, truncate(descriptions.get(id), 120)));
        this.rows.set(id, tr);
      }
      if (tr.className !== s) tr.className = s;
      setText(tr.firstChild, label);
      return tr;
    });
    // blocks of 100 rows, each laid out only when scrolled to (content-visibility: auto)
    const blocks = chunks(rows, 100);
    while (this.tbodies.length < blocks.length) this.table.append(this.tbodies[this.tbodies.push(h("tbody", {class: "rows"})) - 1]);
    this.tbodies.forEach((tbody, i) => {
      const block = blocks[i] || [];
      const current = tbody.children;
      if (current.length !== block.length || block.some((tr, j) => current[j] !== tr)) tbody.replaceChildren(...block);
    });
    const rest = order.length - ids.length;
    this.more.hidden = rest <= 0;
    if (rest > 0) setText(this.more, `show more (${Math.min(rest, ROWS_MORE).toLocaleString()} of ${rest.toLocaleString()} more)`);
  },

  // draws ROWS_MORE more rows, describing those not described yet in one request
  async showMore() {
    this.shown += ROWS_MORE;
    const missing = this.order.slice(0, this.shown).filter(id => !descriptions.has(id));
    this.more.disabled = true;
    try {
      if (missing.length) {
        const data = await request("/api/describe", null, {id: missing});
        for (const [id, text] of Object.entries(data.described)) descriptions.set(id, text);
      }
      this.drawRows();
    } catch (error) { showError(error.message); } finally { this.more.disabled = false; }
  },

  drawDownloads() {
    const params = {...App.deletionParams(), policy: App.state.policy};
    setAttr(this.json, "href", `/api/whatif.json?${query(params)}`);
    setAttr(this.rdf, "href", `/api/export?${query({...params, format: this.format.value})}`);
  },
};

const Views = {
  async whatif(el) {
    if (!App.main()) return clear(el, h("p", {}, "Loading…"));
    WhatifView.update(el);
  },

  async artifact(el, id) {
    if (!artifactCache.has(id)) artifactCache.set(id, request("/api/artifact", {id}));
    let data;
    try { data = await artifactCache.get(id); } catch (error) { artifactCache.delete(id); throw error; }
    const status = App.status();
    const summary = (App.main()?.summaries || {})[id];  // a sentence-level summary: kept, trimmed or removed
    const state = summary ? summary.status : statusOf(id, status) === "kept" ? "alive" : statusOf(id, status);
    clear(el,
      h("h2", {}, h("span", {class: "badge"}, data.layer), " ", h("span", {id: "artifact-id"}, data.id), " ",
        h("span", {id: "artifact-status", class: `badge ${state}`}, state)),
      h("p", {id: "artifact-text"}, data.text),
      drawArtifactGraph(data, status),
      contentCard(data, status),
      h("div", {class: "card"}, h("h3", {}, "Label"), h("code", {}, data.label), data.exact ? "" : h("span", {class: "muted"}, "  (capped: support sets beyond the cap were dropped)")),
      robustnessCard(data.robustness),
      h("div", {class: "card", id: "support-sets"}, h("h3", {}, `Support sets (${data.support_sets.length})`),
        data.support_sets.map((set, i) => supportSet(set, i, status))),
      data.derivation ? h("div", {class: "card"}, h("h3", {}, "Derivation (from the first support set)"),
                          h("ul", {class: "tree"}, treeNode(data.derivation))) : null,
      data.entities.length ? h("div", {class: "card"}, h("h3", {}, "Around it"), data.entities.map(name =>
        h("div", {}, link(entityHref(name), name), h("ul", {}, data.neighbours[name].map(n =>
          h("li", {class: status.dead.has(n.id) ? "dead" : ""}, link(artifactHref(n.id), n.id), " ", n.text)))))) : null);
  },

  async entity(el, name) {
    const data = await request("/api/entity", {name});
    const status = App.status();
    clear(el, h("h2", {}, "Entity ", h("span", {id: "entity-name"}, name)),
      ["merge", "claim", "edge"].map(layer => data[layer].length ? h("div", {class: "card"},
        h("h3", {}, `${layer}s (${data[layer].length})`),
        h("table", {}, data[layer].map(a => h("tr", {class: statusOf(a.id, status), "data-id": a.id},
          h("td", {class: "status-cell"}, statusOf(a.id, status)), h("td", {}, link(artifactHref(a.id), a.id)),
          h("td", {}, a.text))))) : null));
  },

  async top(el) {
    const policy = App.topPolicy || App.state.policy;
    const data = await request("/api/top-sources", {policy, limit: 25});
    const select = h("select", {id: "top-policy"}, App.info.policies.map(p => h("option", {value: p, selected: p === policy}, p)));
    select.addEventListener("change", () => { App.topPolicy = select.value; renderRoute(); });
    const max = Math.max(1, ...data.sources.map(r => r.dead));
    clear(el, h("h2", {}, "Top sources"),
      h("p", {class: "muted"}, "The sources whose retraction alone would kill the most artifacts, per layer, under ", select,
        ` (${data.of} sources; one what-if each).`),
      h("div", {class: "legend muted"}, LAYERS.map(l => [h("span", {class: l, style: `background:${layerColour(l)}`}), l])),
      data.sources.map(row => h("div", {class: "top-row", "data-source": row.source},
        h("span", {title: row.source}, truncate(row.source, 34)),
        h("div", {class: "bar"}, LAYERS.map(l => row.by_layer[l] ? h("div", {class: l, title: `${row.by_layer[l]} ${l}`,
                                                                             style: `width:${100 * row.by_layer[l] / max}%`}) : null)),
        h("span", {}, row.dead),
        h("button", {type: "button", onclick: e => App.toggle("sources", row.source, e.timeStamp)},
          App.state.sources.includes(row.source) ? "restore" : "switch off"))));
  },
};

function chunks(list, size) {
  const out = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

function layerColour(layer) {
  return {claim: "#1565c0", merge: "#6a1b9a", edge: "#90a4ae", summary: "#ef6c00", sentence: "#f9a825",
          contradiction: "#ad1457"}[layer];
}

function contentCard(data, status) {
  const c = data.content;
  let body;
  if (data.triple) body = h("p", {}, link(entityHref(c.subject), c.subject), ` ${c.predicate} `, link(entityHref(c.object), c.object));
  else if (data.layer === "merge") body = h("p", {}, "canonical ", link(entityHref(c.canonical), c.canonical), "; members: ",
    c.members.map((m, i) => [i ? ", " : "", link(entityHref(m), m)]));
  else if (data.contradiction) body = contradictionBody(data.contradiction, status);
  else if (data.layer === "sentence") body = h("p", {}, `"${c.text}" (sentence ${c.index} of `, link(artifactHref(c.summary), c.summary), ")");
  else if (data.sentences.length) body = h("ol", {id: "sentences"}, data.sentences.map(s =>
    h("li", {class: status.dead.has(s.id) ? "dead" : "", "data-id": s.id}, s.text, " ", link(artifactHref(s.id), "→"))));
  else body = h("p", {}, c.text || JSON.stringify(c));
  return h("div", {class: "card", id: "content"}, h("h3", {}, "Content"), body);
}

// a contradiction: its two sides (each linked to its claim or edge), the reason, and the smallest
// sets of sources and of assertions whose retraction resolves it (each a click away as a what-if)
function contradictionBody(c, status) {
  const side = s => {
    const triple = [s.subject, " ", s.negated ? h("b", {class: "not"}, "NOT ") : "", s.predicate, " ", s.object];
    return h("span", {class: "side"}, s.artifact ? h("a", {href: artifactHref(s.artifact), title: s.artifact}, triple) : triple);
  };
  const sets = (title, found, kind) => h("div", {class: "resolving", "data-kind": kind}, h("span", {class: "muted"}, title),
    found.length ? found.map((set, i) => [i ? " | " : " ", h("a", {href: "#", title: "switch these off",
      onclick: e => { e.preventDefault(); App.change({[kind]: [...new Set([...App.state[kind], ...set])]}, e.timeStamp); }},
      `{${set.join(", ")}}`)]) : " none found");
  const sides = c.sides || [];
  return h("div", {id: "contradiction"},
    sides.length === 2 ? h("p", {}, side(sides[0]), h("b", {}, "  vs  "), side(sides[1])) : null,
    // the reason P alone is short for "P vs not P" (rules/contradictions.dl)
    h("p", {class: "muted"}, `reason: ${String(c.reason).includes(": ") || !sides[1]?.negated ? c.reason
                                        : `${c.reason} vs not ${c.reason}: stated and negated`}`),
    sets("resolved by retracting sources:", c.resolve_by_sources, "sources"),
    sets("resolved by deleting assertions:", c.resolve_by_assertions, "assertions"),
    c.note ? h("p", {class: "muted"}, c.note) : null);
}

function robustnessCard(r) {
  return h("div", {class: "card", id: "robustness"}, h("h3", {}, "Robustness"),
    h("p", {}, `Fewest sources whose retraction kills it${r.exact ? "" : " (capped label: at least)"}: `,
      h("b", {}, r.fewest_sources_to_kill.length), ` (${r.fewest_sources_to_kill.join(", ")}); `,
      `${plural(r.support_sets, "support set")} over ${plural(r.sources.length, "source")}, ${r.independent_sources} with no source in common`,
      r.echo ? h("span", {class: "badge dead"}, "echo: several paths, one origin") : ""),
    h("p", {id: "provenance"}, "paths ", h("b", {id: "paths"}, r.paths),
      r.paths_counted === "support_sets" ? " (support sets)" : ` (${r.paths_counted})`, ", origins ",
      h("b", {id: "origins"}, r.origins), " distinct, independent supports ",
      h("b", {id: "independent-supports"}, r.independent_supports),
      " (no origin in common); fewest origins whose retraction kills it: ",
      h("b", {}, r.fewest_origins_to_kill.length), ` (${r.fewest_origins_to_kill.join(", ")})`,
      r.lower_bounds ? " (capped label: every count is a lower bound)" : ""),
    Object.entries(r.origin_clusters || {}).filter(([o, members]) => members.length > 1).map(([o, members]) =>
      h("p", {class: "muted origin"}, `origin ${o}: ${members.join(", ")}`)));
}

function supportSet(set, i, status) {
  const broken = set.some(a => status.deleted.has(a.id));
  return h("div", {class: `support-set${broken ? " broken" : ""}`, "data-set": i + 1},
    h("div", {}, h("b", {}, `S${i + 1}`), broken ? h("span", {class: "muted"}, " broken by the deletion") : ""),
    h("table", {}, set.map(a => h("tr", {class: status.deleted.has(a.id) ? "deleted" : "", "data-assertion": a.id},
      h("td", {}, h("label", {title: "switch this assertion off"}, h("input", {type: "checkbox", checked: App.state.assertions.includes(a.id),
        onchange: e => App.toggle("assertions", a.id, e.timeStamp)}), " ", a.id)),
      h("td", {}, h("a", {href: "#", onclick: e => { e.preventDefault(); App.toggle("sources", a.source, e.timeStamp); },
                         title: "switch this source off or on"}, a.source)),
      h("td", {class: "kind"}, h("span", {class: `badge kind ${a.kind}`}, a.kind)),
      h("td", {class: "triple"}, a.negated ? [a.triple[0], " ", h("b", {class: "not"}, "NOT"), ` ${a.triple[1]} ${a.triple[2]}`]
                                           : a.triple.join(" ")),
      h("td", {class: "evidence"}, a.text || "")))));
}

function treeNode(node) {
  const how = node.assertion ? ` stated by ${node.assertion}` : node.rule ? "" : " background";
  return h("li", {}, h("code", {}, node.fact), h("span", {class: "muted"}, how),
    node.rule ? h("div", {class: "muted"}, "by ", h("code", {}, node.rule)) : null,
    node.premises.length ? h("ul", {}, node.premises.map(treeNode)) : null);
}
