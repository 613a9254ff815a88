// A tiny offline syntax highlighter (no CDN is reachable). It reads the element's textContent and
// rebuilds it from text nodes and <span>s set with textContent, so agent code is never parsed as HTML.
(function () {
  "use strict";
  const PYTHON = new Set(("and as assert async await break class continue def del elif else except finally " +
    "for from global if import in is lambda nonlocal not or pass raise return try while with yield " +
    "None True False self").split(" "));
  const BASH = new Set(("if then else elif fi for while do done case esac in function return export " +
    "local echo cd pip python python3 sudo").split(" "));
  const BUILTINS = new Set(("print len range open int float str list dict set tuple min max sum sorted " +
    "enumerate zip map filter isinstance super abs round any all").split(" "));
  // One alternation: comment | string | number | word. Group position decides the token class.
  const TOKEN = /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g;

  function classify(match, lang, previousWord) {
    if (match[1] !== undefined) return "comment";
    if (match[2] !== undefined) return "string";
    if (match[3] !== undefined) return "number";
    const word = match[4];
    if (previousWord === "def" || previousWord === "class") return "def";
    if ((lang === "bash" ? BASH : PYTHON).has(word)) return "keyword";
    return BUILTINS.has(word) ? "builtin" : null;
  }

  function tokens(code, lang) {
    const out = [];
    let last = 0;
    let previousWord = null;
    for (const match of code.matchAll(TOKEN)) {
      if (match.index > last) out.push([null, code.slice(last, match.index)]);
      out.push([classify(match, lang, previousWord), match[0]]);
      if (match[4] !== undefined) previousWord = match[4];
      last = match.index + match[0].length;
    }
    if (last < code.length) out.push([null, code.slice(last)]);
    return out;
  }

  function highlight(el) {
    const fragment = document.createDocumentFragment();
    for (const [cls, text] of tokens(el.textContent, el.dataset.lang || "python")) {
      if (!cls) { fragment.appendChild(document.createTextNode(text)); continue; }
      const span = document.createElement("span");
      span.className = "hl-" + cls;
      span.textContent = text;
      fragment.appendChild(span);
    }
    el.replaceChildren(fragment);
    el.dataset.highlighted = "true";
  }

  function highlightAll(root) {
    root.querySelectorAll("pre.code[data-lang]:not([data-highlighted])").forEach(highlight);
  }

  window.MedalboardHighlight = { highlight, highlightAll, tokens };
})();
