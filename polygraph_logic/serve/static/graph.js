// polygraph explorer: an artifact drawn as a layered graph in plain SVG:
// sources -> assertions -> support sets -> the artifact -> its entities -> claims and edges around them.
// Under the current what-if, deleted sources and assertions, broken support sets and dead artifacts are greyed.
"use strict";

const GRAPH = {width: 180, height: 24, gap: 8, columnGap: 46, top: 30};
const COLUMNS = ["sources", "assertions", "support sets", "artifact", "entities", "around"];

function drawArtifactGraph(data, status) {
  const nodes = [], links = [], byKey = new Map();
  const add = (key, column, label, cls, title, onclick) => {
    if (byKey.has(key)) return byKey.get(key);
    const node = {key, column, label, cls, title, onclick};
    byKey.set(key, node); nodes.push(node);
    return node;
  };
  const offSources = new Set(App.state.sources);
  const artifactDead = status.dead.has(data.id);
  const artifact = add(`artifact:${data.id}`, 3, data.id, `artifact${artifactDead ? " dead" : ""}`, data.text);
  data.support_sets.forEach((set, i) => {
    const broken = set.some(a => status.deleted.has(a.id));
    const setNode = add(`set:${i}`, 2, `S${i + 1}: ${set.length} assertion${set.length === 1 ? "" : "s"}`,
                        `set${broken ? " dead" : ""}`, broken ? "broken by the deletion" : "intact");
    links.push([setNode, artifact, broken]);
    for (const a of set) {
      const deleted = status.deleted.has(a.id);
      // a negated assertion reads "S NOT P O"; the tooltip names the kind
      const triple = a.negated ? `${a.triple[0]} NOT ${a.triple[1]} ${a.triple[2]}` : a.triple.join(" ");
      const assertion = add(`assertion:${a.id}`, 1, `${a.id}: ${triple}`, `assertion${deleted ? " deleted" : ""}`,
                            `${a.text || triple} (${a.kind || "source_claim"})`, e => App.toggle("assertions", a.id, e.timeStamp));
      const source = add(`source:${a.source}`, 0, a.source, `source${offSources.has(a.source) ? " deleted" : ""}`,
                         "click: switch this source off or on", e => App.toggle("sources", a.source, e.timeStamp));
      links.push([assertion, setNode, broken]);
      if (!links.some(([f, t]) => f === source && t === assertion)) links.push([source, assertion, deleted]);
    }
  });
  let around = 0;
  for (const name of data.entities) {
    const entity = add(`entity:${name}`, 4, name, "entity", "entity", () => { location.hash = entityHref(name); });
    links.push([artifact, entity, artifactDead]);
    for (const n of data.neighbours[name].slice(0, 3)) {
      if (around >= 14) break;
      const dead = status.dead.has(n.id);
      const node = add(`artifact:${n.id}`, 5, n.text, `neighbour${dead ? " dead" : ""}`, n.id,
                       () => { location.hash = artifactHref(n.id); });
      links.push([entity, node, dead]);
      around += 1;
    }
  }
  const columns = COLUMNS.map((_, c) => nodes.filter(n => n.column === c));
  const tallest = Math.max(...columns.map(c => c.length));
  const height = GRAPH.top + tallest * (GRAPH.height + GRAPH.gap) + 10;
  for (const column of columns) {
    const offset = (tallest - column.length) * (GRAPH.height + GRAPH.gap) / 2;
    column.forEach((node, i) => {
      node.x = 10 + node.column * (GRAPH.width + GRAPH.columnGap);
      node.y = GRAPH.top + offset + i * (GRAPH.height + GRAPH.gap);
    });
  }
  const width = 20 + COLUMNS.length * GRAPH.width + (COLUMNS.length - 1) * GRAPH.columnGap;
  const svg = h("svg", {class: "graph", id: "artifact-graph", viewBox: `0 0 ${width} ${height}`,
                        style: `max-height:${Math.max(160, height)}px`});
  COLUMNS.forEach((title, c) => {
    if (columns[c].length) svg.append(h("text", {x: 10 + c * (GRAPH.width + GRAPH.columnGap), y: 16, "font-size": 11, fill: "#6b7280"}, title));
  });
  for (const [from, to, dead] of links) {
    const x1 = from.x + GRAPH.width, y1 = from.y + GRAPH.height / 2, x2 = to.x, y2 = to.y + GRAPH.height / 2;
    const mid = (x1 + x2) / 2;
    svg.append(h("path", {class: `link${dead ? " dead" : ""}`, d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`}));
  }
  for (const node of nodes) {
    svg.append(h("g", {class: `node ${node.cls}`, "data-key": node.key, transform: `translate(${node.x},${node.y})`,
                       onclick: node.onclick},
      h("title", {}, node.title || node.label),
      h("rect", {width: GRAPH.width, height: GRAPH.height}),
      h("text", {x: 6, y: 16}, truncate(node.label, 30))));
  }
  return svg;
}
