// polygraph explorer: DOM and request helpers shared by the other scripts (no library).
"use strict";

// h("tr", {class: "dead", "data-id": id}, child, ...) -> an element; strings become text nodes
function h(tag, attrs, ...children) {
  const svg = ["svg", "g", "rect", "text", "path", "title", "line"].includes(tag);
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function clear(el, ...children) { el.replaceChildren(...children.flat(Infinity).filter(c => c !== null && c !== undefined)); return el; }

// the query string of a parameter object: arrays repeat their name
function query(params) {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null && v !== "") out.append(key, v);
  }
  return out.toString();
}

class RequestError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

// GET (or POST with a JSON body) an endpoint; a 4xx/5xx becomes a RequestError with the server's message
async function request(path, params, body) {
  const url = params ? `${path}?${query(params)}` : path;
  const init = body ? {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)} : {};
  const response = await fetch(url, init);
  const data = await response.json().catch(() => ({error: {code: "bad_response", message: response.statusText}}));
  if (!response.ok) throw new RequestError(response.status, data.error.code, data.error.message);
  return data;
}

function link(href, text, attrs) { return h("a", {href, ...(attrs || {})}, text); }
function artifactHref(id) { return "#/artifact/" + encodeURIComponent(id); }
function entityHref(name) { return "#/entity/" + encodeURIComponent(name); }
function badge(text, cls) { return h("span", {class: `badge ${cls || text}`}, text); }
function plural(n, word) { return `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`; }
function truncate(text, n) { text = String(text); return text.length > n ? text.slice(0, n - 1) + "…" : text; }
