// The replay player: windows of server-rendered step cards, a current step, keyboard and player
// controls, search hits from the steps API, the solution tree and the score chart.
// Agent output is untrusted: cards arrive already escaped by Django, and everything this file
// writes from JSON goes through textContent or SVG attributes, never innerHTML.
(function () {
  "use strict";
  const H = window.MedalboardHighlight;

  function params(values) {
    const search = new URLSearchParams();
    Object.entries(values).forEach(([k, v]) => { if (v !== "" && v !== null && v !== undefined) search.set(k, v); });
    return search.toString();
  }

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(url + " -> " + response.status);
    return response.json();
  }

  // A saved copy opened from disk has a <base href> pointing at the site: a relative URL would resolve
  // there, another origin, and replaceState throws SecurityError. So the URL is the document's own
  // address with the new fragment; where the browser still refuses (some treat every file:// page as
  // its own origin), the step stays selected and only the address bar keeps its old fragment.
  function replaceHash(hash) {
    try {
      history.replaceState(null, "", location.href.split("#")[0] + hash);
    } catch (error) {
      if (!(error instanceof DOMException)) throw error;
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Windows of cards

  function Replay(root) {
    this.root = root;
    this.pages = document.getElementById("pages");
    this.loadPrev = document.getElementById("load-prev");
    this.loadNext = document.getElementById("load-next");
    this.kinds = "";
    this.current = null;
    this.hits = null;
    this.timer = null;
    this.busy = Promise.resolve();
  }

  Replay.prototype.cards = function () { return Array.from(this.pages.querySelectorAll("article.step")); };
  Replay.prototype.card = function (index) { return document.getElementById("step-" + index); };
  Replay.prototype.fetchWindow = async function (query) {
    const url = this.root.dataset.windowUrl + "?" + params({ ...query, type: this.kinds });
    const response = await fetch(url, { credentials: "same-origin" });
    if (!response.ok) throw new Error(url + " -> " + response.status);
    // DOMParser never runs scripts; the HTML is Django-rendered with every agent string escaped.
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    return {
      section: document.adoptNode(doc.querySelector(".step-window")),
      hasPrev: response.headers.get("X-Window-Has-Prev") === "1",
      hasNext: response.headers.get("X-Window-Has-Next") === "1",
    };
  };

  Replay.prototype.place = function ({ section, hasPrev, hasNext }, where) {
    if (where === "replace") this.pages.replaceChildren(section);
    else if (where === "prepend") this.pages.prepend(section);
    else this.pages.append(section);
    if (where !== "prepend") this.loadNext.hidden = !hasNext;
    if (where !== "append") this.loadPrev.hidden = !hasPrev;
    H.highlightAll(section);
  };

  // Windows are keyed on step indexes: the next one starts after the last card shown.
  Replay.prototype.loadAdjacent = async function (direction) {
    const cards = this.cards();
    const edge = direction > 0 ? this.loadNext : this.loadPrev;
    if (edge.hidden || !cards.length) return false;
    const query = direction > 0 ? { after: cards[cards.length - 1].dataset.index } : { before: cards[0].dataset.index };
    const before = document.documentElement.scrollHeight;
    this.place(await this.fetchWindow(query), direction > 0 ? "append" : "prepend");
    // Keep what the reader was looking at in place when earlier steps are inserted above it.
    if (direction < 0) window.scrollBy(0, document.documentElement.scrollHeight - before);
    return true;
  };

  Replay.prototype.loadAround = async function (index) {
    this.place(await this.fetchWindow({ around: index }), "replace");
  };

  // ----------------------------------------------------------------------------------------------
  // The current step

  Replay.prototype.select = function (card, { scroll = true, hash = true } = {}) {
    if (!card) return;
    if (this.current) this.current.classList.remove("current");
    this.current = card;
    card.classList.add("current");
    if (scroll) card.scrollIntoView({ block: "center" });
    if (hash) replaceHash("#step-" + card.dataset.index);
    document.querySelectorAll("#tree g.tree-node.current").forEach((g) => g.classList.remove("current"));
    const node = document.querySelector('#tree g.tree-node[data-index="' + card.dataset.index + '"]');
    if (node) node.classList.add("current");
    document.getElementById("scrubber").value = card.dataset.index;
    // Indexes count from 0 (the cards' #0 permalinks); people count steps from 1.
    document.getElementById("position").textContent =
      "step " + (Number(card.dataset.index) + 1) + " / " + this.root.dataset.nSteps;
  };

  Replay.prototype.goTo = async function (index) {
    let card = this.card(index);
    if (!card && this.root.dataset.exported) {  // a saved copy holds only its cards: the nearest one
      card = this.cards().find((c) => Number(c.dataset.index) >= index) || this.cards().pop();
    }
    if (!card) {
      await this.loadAround(index);
      card = this.card(index) || this.cards().find((c) => Number(c.dataset.index) >= index) || this.cards().pop();
    }
    this.select(card);
    return card;
  };

  Replay.prototype.move = async function (delta) {
    const cards = this.cards();
    let position = cards.indexOf(this.current) + delta;
    if (!this.current) position = 0;
    if (position >= cards.length && (await this.loadAdjacent(1))) return this.move(delta);
    if (position < 0 && (await this.loadAdjacent(-1))) return this.move(delta);
    const target = this.cards()[position];
    if (target) this.select(target);
    return target;
  };

  // Serialise navigation: a held-down key must not start ten window fetches at once.
  Replay.prototype.queue = function (fn) {
    this.busy = this.busy.then(fn).catch((error) => console.error(error));
    return this.busy;
  };

  // ----------------------------------------------------------------------------------------------
  // Player, keyboard, filters, scrubber

  Replay.prototype.play = function () {
    const button = document.getElementById("play");
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      button.textContent = "▶ Play";
      return;
    }
    button.textContent = "⏸ Pause";
    const delay = Number(document.getElementById("speed").value);
    this.timer = setInterval(() => this.queue(async () => {
      const moved = await this.move(1);
      if (!moved || moved === this.cards()[this.cards().length - 1] && this.loadNext.hidden) this.play();
    }), delay);
  };

  Replay.prototype.bindControls = function () {
    document.getElementById("step-next").addEventListener("click", () => this.queue(() => this.move(1)));
    document.getElementById("step-prev").addEventListener("click", () => this.queue(() => this.move(-1)));
    document.getElementById("play").addEventListener("click", () => this.play());
    document.getElementById("speed").addEventListener("change", () => { if (this.timer) { this.play(); this.play(); } });
    document.getElementById("scrubber").addEventListener("change", (e) => this.queue(() => this.goTo(Number(e.target.value))));
    this.loadNext.addEventListener("click", () => this.queue(() => this.loadAdjacent(1)));
    this.loadPrev.addEventListener("click", () => this.queue(() => this.loadAdjacent(-1)));
    document.getElementById("kind-filters").addEventListener("change", () => this.queue(() => this.filter()));
    document.addEventListener("keydown", (e) => this.onKey(e));
    window.addEventListener("hashchange", () => this.openHash());
    this.pages.addEventListener("click", (e) => this.onCardClick(e));
    if ("IntersectionObserver" in window) {
      // Scrolling to the end of the loaded steps loads the next window.
      new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting) && !this.loadNext.hidden) this.queue(() => this.loadAdjacent(1));
      }).observe(this.loadNext);
    }
  };

  const NEXT_KEYS = new Set(["j", "ArrowDown", "ArrowRight"]);
  const PREV_KEYS = new Set(["k", "ArrowUp", "ArrowLeft"]);

  Replay.prototype.onKey = function (event) {
    if (event.target.closest("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
    const last = Number(this.root.dataset.nSteps) - 1;
    if ((event.key === "Home" || event.key === "End") && last >= 0) {
      event.preventDefault();
      this.queue(() => this.goTo(event.key === "Home" ? 0 : last));
      return;
    }
    if (!NEXT_KEYS.has(event.key) && !PREV_KEYS.has(event.key)) return;
    event.preventDefault();
    this.queue(() => this.move(NEXT_KEYS.has(event.key) ? 1 : -1));
  };

  Replay.prototype.onCardClick = function (event) {
    if (event.target.closest("button.show-all")) return;
    const card = event.target.closest("article.step");
    if (card && !event.target.closest("a")) this.select(card, { scroll: false });
  };

  Replay.prototype.filter = async function () {
    const boxes = Array.from(document.querySelectorAll("#kind-filters input"));
    const checked = boxes.filter((b) => b.checked).map((b) => b.value);
    this.kinds = checked.length === boxes.length ? "" : (checked.join(",") || "none");
    const index = this.current ? Number(this.current.dataset.index) : 0;
    await this.loadAround(index);
    this.select(this.card(index) || this.cards()[0], { hash: false });
  };

  Replay.prototype.openHash = function () {
    const match = /^#step-(\d+)$/.exec(location.hash);
    if (match) this.queue(() => this.goTo(Number(match[1])));
  };

  // ----------------------------------------------------------------------------------------------
  // "Show all": the full text of one field, from the steps API, written with textContent.
  // Bound on the document so it works on the compare page too.

  async function showAll(button) {
    const card = button.closest("article.step");
    const index = Number(card.dataset.index);
    const step = (await getJSON(button.dataset.url)).results.find((s) => s.index === index);
    if (!step) return;
    const field = button.dataset.field;
    const value = field === "text" ? step.text : (step.data || {})[field];
    const pre = card.querySelector('pre[data-field="' + field + '"]');
    pre.textContent = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    delete pre.dataset.highlighted;
    H.highlightAll(card);
    button.closest(".truncated").remove();
  }

  // ----------------------------------------------------------------------------------------------
  // Find in trajectory: hits come from the API (all step text, server-side), a page at a time. The
  // API does not count every hit of a long trajectory: it hands out a cursor while more may follow.

  Replay.prototype.search = async function (query) {
    this.hits = { query, list: [], cursor: null, more: true, position: -1 };
    document.querySelectorAll("article.step.hit").forEach((c) => c.classList.remove("hit"));
    if (!query) return this.showHitCount();
    await this.fetchHits();
    await this.nextHit(1);
  };

  Replay.prototype.fetchHits = async function () {
    const h = this.hits;
    const found = h.list.length;
    // A page may come back empty while more follows (the server read its share of a long file).
    while (h.more && h.list.length === found) {
      const query = { q: h.query, page_size: 200, type: this.kinds };
      if (h.cursor !== null) query.cursor = h.cursor;
      const data = await getJSON(this.root.dataset.apiUrl + "?" + params(query));
      h.list.push(...data.results.map((s) => s.index));
      h.cursor = data.next_cursor;
      h.more = data.more;
    }
  };

  Replay.prototype.nextHit = async function (delta) {
    const h = this.hits;
    if (!h || !h.list.length) return this.showHitCount();
    if (h.position + delta >= h.list.length && h.more) await this.fetchHits();
    h.position = (h.position + delta + h.list.length) % h.list.length;
    const card = await this.goTo(h.list[h.position]);
    if (card) { card.classList.add("hit"); markText(card, h.query); }
    this.showHitCount();
  };

  Replay.prototype.showHitCount = function () {
    const h = this.hits;
    const label = !h || !h.query ? "" : h.list.length
      ? "hit " + (h.position + 1) + " of " + h.list.length + (h.more ? "+" : "") : "no hits";
    document.getElementById("hit-count").textContent = label;
  };

  Replay.prototype.bindSearch = function () {
    const input = document.getElementById("search");
    document.getElementById("search-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const query = input.value.trim();
      if (this.hits && this.hits.query === query && query) this.queue(() => this.nextHit(1));
      else this.queue(() => this.search(query));
    });
    document.getElementById("hit-next").addEventListener("click", () => this.queue(() => this.nextHit(1)));
    document.getElementById("hit-prev").addEventListener("click", () => this.queue(() => this.nextHit(-1)));
  };

  // Wraps occurrences in <mark> by splitting text nodes: no markup is ever re-parsed.
  function markText(card, query) {
    const needle = query.toLowerCase();
    const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) if (walker.currentNode.nodeValue.toLowerCase().includes(needle)) nodes.push(walker.currentNode);
    nodes.forEach((node) => {
      if (node.parentNode.nodeName === "MARK") return;
      const at = node.nodeValue.toLowerCase().indexOf(needle);
      const match = node.splitText(at);
      match.splitText(needle.length);
      const mark = document.createElement("mark");
      match.parentNode.replaceChild(mark, match);
      mark.appendChild(match);
      const folded = mark.closest("details"); // an LLM call's prompt or reply: open where the hit is
      if (folded) folded.open = true;
    });
  }

  // ----------------------------------------------------------------------------------------------
  // Outline: the tree-search tree (SVG) and the score-over-time chart (Plotly)

  Replay.prototype.loadOutline = async function () {
    const embedded = document.getElementById("replay-outline-data"); // a static export carries it
    const outline = embedded ? JSON.parse(embedded.textContent) : await getJSON(this.root.dataset.outlineUrl);
    if (outline.tree.length) drawTree(document.getElementById("tree"), outline.tree, (i) => this.queue(() => this.goTo(i)));
    const known = outline.tree.map((n) => n.maximize).find((m) => m === true || m === false);
    const direction = this.root.dataset.scoreDirection || (known === undefined ? "" : known ? "higher" : "lower");
    if (outline.scores.length) this.drawScores(outline.scores, scoreTitle(this.root.dataset.scoreMetric, direction));
  };

  function scoreTitle(metric, direction) {
    return (metric || "score") + " (" + (direction ? direction + " is better" : "direction not stated") + ")";
  }

  Replay.prototype.drawScores = function (scores, yTitle) {
    const el = document.getElementById("score-chart");
    document.getElementById("scores-card").hidden = false;
    if (!window.Plotly) return;
    const timed = scores.every((p) => p.t !== null);
    const trace = {
      x: scores.map((p) => (timed ? p.t : p.index)), y: scores.map((p) => p.score),
      customdata: scores.map((p) => p.index), mode: "lines+markers", type: "scatter", name: "score",
      hovertemplate: "step %{customdata}<br>t=%{x:.0f}s<br>score=%{y}<extra></extra>",
    };
    const layout = { margin: { l: 60, r: 10, t: 10, b: 60 }, height: 300,
      xaxis: { title: { text: timed ? "seconds since start" : "step", standoff: 8 }, automargin: true },
      yaxis: { title: { text: yTitle, standoff: 6 }, automargin: true } };
    window.Plotly.newPlot(el, [trace], layout, { displaylogo: false, responsive: true }).then(() => {
      el.dataset.drawn = "true";
      el.on("plotly_click", (event) => this.queue(() => this.goTo(event.points[0].customdata)));
    });
  };

  const SVG = "http://www.w3.org/2000/svg";

  function svg(name, attributes) {
    const el = document.createElementNS(SVG, name);
    Object.entries(attributes).forEach(([k, v]) => el.setAttribute(k, v));
    return el;
  }

  // Leaves get consecutive columns, parents sit above the middle of their children.
  function layoutTree(nodes) {
    const byIndex = new Map(nodes.map((n) => [n.index, { ...n, children: [] }]));
    const roots = [];
    byIndex.forEach((n) => (byIndex.has(n.parent_index) ? byIndex.get(n.parent_index).children.push(n) : roots.push(n)));
    let column = 0;
    const place = (node, depth) => {
      node.depth = depth;
      node.children.forEach((child) => place(child, depth + 1));
      node.x = node.children.length ? node.children.reduce((s, c) => s + c.x, 0) / node.children.length : column++;
    };
    roots.forEach((root) => place(root, 0));
    return { nodes: Array.from(byIndex.values()), columns: column };
  }

  // Dark = better, in the metric's direction (lower-is-better metrics flip the scale).
  function scoreColour(score, low, high, maximize) {
    if (score === null || high === low) return score === null ? "#d0d5dd" : "#2f5fa7";
    const up = (score - low) / (high - low);
    const f = maximize === false ? 1 - up : up;
    return "hsl(215, 60%, " + Math.round(85 - f * 55) + "%)";
  }

  function drawTree(container, nodes, open) {
    container.closest("#tree-card").hidden = false;
    const { nodes: placed, columns } = layoutTree(nodes);
    const scores = placed.map((n) => n.score).filter((s) => s !== null);
    const low = Math.min(...scores), high = Math.max(...scores);
    const depth = Math.max(...placed.map((n) => n.depth));
    const dx = 22, dy = 44, pad = 14;
    const root = svg("svg", { width: columns * dx + 2 * pad, height: (depth + 1) * dy + 2 * pad, class: "tree-svg" });
    const pos = (n) => [pad + n.x * dx + dx / 2, pad + n.depth * dy + 8];
    placed.forEach((n) => n.children.forEach((c) => {
      const [x1, y1] = pos(n), [x2, y2] = pos(c);
      root.appendChild(svg("line", { x1, y1, x2, y2, class: "tree-edge" }));
    }));
    const directions = placed.map((n) => n.maximize).filter((m) => m === true || m === false);
    const maximize = directions.length ? directions[0] : null;
    placed.forEach((n) => root.appendChild(treeNode(n, pos(n), scoreColour(n.score, low, high, maximize), open)));
    container.dataset.direction = maximize === false ? "lower" : maximize === true ? "higher" : "unknown";
    container.replaceChildren(root);
    container.dataset.drawn = "true";
  }

  function treeNode(n, [cx, cy], fill, open) {
    const g = svg("g", { class: "tree-node" + (n.buggy ? " buggy" : "") + (n.is_best ? " best" : ""), "data-index": n.index, tabindex: 0 });
    g.appendChild(svg("circle", { cx, cy, r: n.is_best ? 9 : 7, fill }));
    if (n.buggy) g.appendChild(svg("path", { d: `M${cx - 4} ${cy - 4}L${cx + 4} ${cy + 4}M${cx + 4} ${cy - 4}L${cx - 4} ${cy + 4}`, class: "tree-x" }));
    if (n.is_best) { const star = svg("text", { x: cx, y: cy - 12, class: "tree-star", "text-anchor": "middle" }); star.textContent = "★"; g.appendChild(star); }
    const title = svg("title", {});
    title.textContent = "#" + n.index + " " + (n.title || n.kind) + (n.score === null ? "" : " · score " + n.score) + (n.buggy ? " · buggy" : "");
    g.appendChild(title);
    g.addEventListener("click", () => open(n.index));
    g.addEventListener("keydown", (e) => { if (e.key === "Enter") open(n.index); });
    return g;
  }

  // ----------------------------------------------------------------------------------------------
  // Compare page: both runs' scores on one chart; a point opens its step in that run's replay.

  function drawCompare(el) {
    const series = JSON.parse(document.getElementById("compare-scores-data").textContent);
    if (!window.Plotly) return;
    const traces = ["a", "b"].map((key) => ({ ...series[key], mode: "lines+markers", type: "scatter",
      hovertemplate: "step %{customdata}<br>t=%{x:.0f}s<br>score=%{y}<extra>%{fullData.name}</extra>" }));
    const layout = { margin: { l: 60, r: 10, t: 10, b: 60 }, height: 320,
      xaxis: { title: { text: "seconds since start (step number where a run has no times)", standoff: 8 }, automargin: true },
      yaxis: { title: { text: el.dataset.yTitle || "score", standoff: 6 }, automargin: true } };
    window.Plotly.newPlot(el, traces, layout, { displaylogo: false, responsive: true }).then(() => {
      el.dataset.drawn = "true";
      el.on("plotly_click", (event) => {
        const point = event.points[0];
        location.href = "/runs/" + series[["a", "b"][point.curveNumber]].run + "/#step-" + point.customdata;
      });
    });
  }

  // ----------------------------------------------------------------------------------------------

  function start() {
    H.highlightAll(document);
    document.addEventListener("click", (event) => {
      const button = event.target.closest("button.show-all");
      if (button) showAll(button).catch((error) => console.error(error));
    });
    const compareChart = document.getElementById("compare-scores");
    if (compareChart) drawCompare(compareChart);
    const root = document.getElementById("replay");
    if (!root) return;
    const replay = new Replay(root);
    window.medalboardReplay = replay;
    replay.bindControls();
    replay.bindSearch();
    replay.loadOutline().catch((error) => console.error(error));
    if (/^#step-\d+$/.test(location.hash)) replay.openHash();
    else replay.select(replay.cards()[0], { scroll: false, hash: false });
    replay.queue(() => root.setAttribute("data-ready", "true"));
  }

  start();
})();
