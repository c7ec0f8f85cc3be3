// polygraph explorer: the views (what-if, artifact, entity, top sources), rendered from App's state.
"use strict";

const LAYERS = ["claim", "merge", "edge", "summary", "sentence"];
const artifactCache = new Map();

function statusOf(id, status) {
  if (status.dead.has(id)) return "dead";
  if (status.demoted.has(id)) return "demoted";
  return status.touched.has(id) ? "kept" : "alive";
}

// the per-layer touched/dead/kept bars of one policy's outcome, scaled to `scale` touched artifacts
function layerBars(outcome, scale, main) {
  const rows = LAYERS.filter(l => App.info.layers[l]).map(layer => {
    const c = outcome.by_layer[layer] || {touched: 0, dead: 0, kept: 0};
    const pct = n => `${scale ? (100 * n / scale) : 0}%`;
    const demoted = c.demoted || 0;
    return h("div", {class: "bar-row", "data-layer": layer},
      h("span", {}, layer),
      h("div", {class: "bar", title: `${c.touched} touched of ${App.info.layers[layer]}`},
        h("div", {class: "dead", style: `width:${pct(c.dead)}`}),
        h("div", {class: "demoted", style: `width:${pct(demoted)}`}),
        h("div", {class: "kept", style: `width:${pct(c.kept - demoted)}`})),
      h("span", {class: "counts", "data-dead": c.dead, "data-touched": c.touched},
        `${c.dead} dead · ${c.kept} kept / ${c.touched}`));
  });
  const n = outcome.brief ? outcome.uncertain : outcome.uncertain.length;
  const uncertain = n ? h("div", {class: "muted"}, `${plural(n, "dead verdict")} on capped labels; "exact" settles them`) : null;
  return h("div", {class: `policy-column${main ? " main" : ""}`, "data-policy": outcome.policy},
           h("h3", {}, outcome.policy, main ? " (chosen)" : ""), rows, uncertain);
}

function summaryCards(outcome) {
  const entries = Object.entries(outcome.summaries);
  if (!entries.length) return null;
  return h("div", {class: "card", id: "summaries"}, h("h3", {}, "Summaries, trimmed sentence by sentence"),
    entries.map(([id, entry]) => h("div", {class: "summary", "data-id": id},
      h("div", {}, link(artifactHref(id), id), " ", badge(entry.status),
        h("span", {class: "muted"}, ` ${entry.dead_sentences} of ${entry.sentences} sentences dead`)),
      h("ul", {}, (outcome.summary_sentences[id] || []).map(s =>
        h("li", {class: s.dead ? "dead" : "", "data-id": s.id}, s.text))))));
}

function touchedTable(outcome, status) {
  const described = outcome.described;
  const ids = Object.keys(described);
  const uncertain = new Set(outcome.uncertain);
  return h("div", {class: "card"},
    h("h3", {}, `Touched artifacts under ${outcome.policy}`,
      h("span", {class: "muted"}, ids.length < outcome.touched.length ? ` (first ${ids.length} of ${outcome.touched.length}, dead first)` : "")),
    ids.length ? h("table", {id: "touched"},
      h("colgroup", {}, h("col", {style: "width:110px"}), h("col", {style: "width:80px"}), h("col", {style: "width:190px"}), h("col", {})),
      h("thead", {}, h("tr", {}, h("th", {}, "status"), h("th", {}, "layer"), h("th", {}, "artifact"), h("th", {}, "content"))),
      // blocks of rows the browser lays out only when scrolled to (content-visibility): a what-if that
      // touches thousands of artifacts updates as fast as one that touches a few
      chunks(ids, 100).map(block => h("tbody", {class: "rows"}, block.map(id => {
        const s = statusOf(id, status);
        return h("tr", {class: s, "data-id": id},
          h("td", {class: "status-cell"}, s, uncertain.has(id) ? " (uncertain)" : ""),
          h("td", {}, id.split(":")[0]), h("td", {}, link(artifactHref(id), id)), h("td", {}, truncate(described[id], 120)));
      })))) : h("p", {class: "muted"}, "Nothing is touched: switch off a source, a relation or an assertion on the left."));
}

function downloads() {
  const params = {...App.deletionParams(), policy: App.state.policy};
  const format = h("select", {id: "export-format"}, App.info.formats.map(f => h("option", {value: f}, f)));
  const rdf = link(`/api/export?${query({...params, format: "trig"})}`, "RDF export", {id: "download-rdf", download: ""});
  format.addEventListener("change", () => { rdf.href = `/api/export?${query({...params, format: format.value})}`; });
  return h("div", {class: "card"}, h("h3", {}, "Downloads"),
    link(`/api/whatif.json?${query(params)}`, "what-if JSON", {id: "download-json", download: ""}),
    " (as polygraph whatif --json --list prints it) · ", rdf, " of the cleaned graph in ", format,
    " (every artifact's status; the deletion invalidates the dead ones)");
}

const Views = {
  async whatif(el) {
    const main = App.main();
    if (!main) return clear(el, h("p", {}, "Loading…"));
    const columns = [...new Set([App.state.policy, "deployed", "trust-all"])].map(p => App.outcomes[p]).filter(Boolean);
    const scale = Math.max(1, ...columns.flatMap(o => Object.values(o.by_layer).map(c => c.touched)));
    clear(el,
      h("h2", {}, "What stands and what falls"),
      h("div", {class: "legend muted"}, "bars: touched artifacts per layer:",
        h("span", {style: "background:var(--killed)"}), "dead", h("span", {style: "background:var(--demoted)"}), "demoted",
        h("span", {style: "background:var(--kept)"}), "kept"),
      h("div", {class: "columns", id: "side-by-side"}, columns.map(o => layerBars(o, scale, o.policy === App.state.policy))),
      main.demoted.length ? h("p", {class: "muted"}, `${plural(main.demoted.length, "claim")} demoted: every stating ` +
        "assertion is deleted, but the rules still entail the triple (it stands as an edge)") : null,
      summaryCards(main), touchedTable(main, App.status()), downloads());
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
  return {claim: "#1565c0", merge: "#6a1b9a", edge: "#90a4ae", summary: "#ef6c00", sentence: "#f9a825"}[layer];
}

function contentCard(data, status) {
  const c = data.content;
  let body;
  if (data.triple) body = h("p", {}, link(entityHref(c.subject), c.subject), ` ${c.predicate} `, link(entityHref(c.object), c.object));
  else if (data.layer === "merge") body = h("p", {}, "canonical ", link(entityHref(c.canonical), c.canonical), "; members: ",
    c.members.map((m, i) => [i ? ", " : "", link(entityHref(m), m)]));
  else if (data.layer === "sentence") body = h("p", {}, `"${c.text}" (sentence ${c.index} of `, link(artifactHref(c.summary), c.summary), ")");
  else if (data.sentences.length) body = h("ol", {id: "sentences"}, data.sentences.map(s =>
    h("li", {class: status.dead.has(s.id) ? "dead" : "", "data-id": s.id}, s.text, " ", link(artifactHref(s.id), "→"))));
  else body = h("p", {}, c.text || JSON.stringify(c));
  return h("div", {class: "card", id: "content"}, h("h3", {}, "Content"), body);
}

function robustnessCard(r) {
  return h("div", {class: "card", id: "robustness"}, h("h3", {}, "Robustness"),
    h("p", {}, `Fewest sources whose retraction kills it${r.exact ? "" : " (capped label: at least)"}: `,
      h("b", {}, r.fewest_sources_to_kill.length), ` (${r.fewest_sources_to_kill.join(", ")}); `,
      `independent sources: ${r.independent_sources}; ${plural(r.support_sets, "support set")} over ${plural(r.sources.length, "source")}`,
      r.echo ? h("span", {class: "badge dead"}, "echo: several support sets, one origin") : ""));
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
      h("td", {}, a.triple.join(" ")), h("td", {class: "evidence"}, a.text || "")))));
}

function treeNode(node) {
  const how = node.assertion ? ` stated by ${node.assertion}` : node.rule ? "" : " background";
  return h("li", {}, h("code", {}, node.fact), h("span", {class: "muted"}, how),
    node.rule ? h("div", {class: "muted"}, "by ", h("code", {}, node.rule)) : null,
    node.premises.length ? h("ul", {}, node.premises.map(treeNode)) : null);
}
