// chunkweave inspect: selection, heading tree, lazy page images. No external resources.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const chunks = data.chunks;
  const detail = document.getElementById("detail");

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The parts of embed_text that are not the stored text, marked.
  function diffParts(text, embed) {
    const at = text ? embed.indexOf(text) : -1;
    if (at >= 0) {
      return [[embed.slice(0, at), true], [text, false], [embed.slice(at + text.length), true]];
    }
    let p = 0;
    while (p < text.length && p < embed.length && text[p] === embed[p]) p++;
    let s = 0;
    while (s < text.length - p && s < embed.length - p &&
           text[text.length - 1 - s] === embed[embed.length - 1 - s]) s++;
    return [[embed.slice(0, p), false], [embed.slice(p, embed.length - s), true],
            [embed.slice(embed.length - s), false]];
  }

  // A table chunk's HTML rebuilt from its cells' text only (no markup is trusted).
  function safeTable(markup) {
    const parsed = new DOMParser().parseFromString(markup, "text/html");
    const table = el("table", {"class": "chunk-table"});
    for (const tr of parsed.querySelectorAll("tr")) {
      const row = el("tr");
      for (const cell of tr.children) {
        const tag = cell.tagName === "TH" ? "th" : "td";
        const out = el(tag, {}, cell.textContent);
        for (const span of ["colspan", "rowspan"]) {
          const v = cell.getAttribute(span);
          if (v && /^\d{1,3}$/.test(v)) out.setAttribute(span, v);
        }
        row.appendChild(out);
      }
      table.appendChild(row);
    }
    return table;
  }

  function show(i) {
    const c = chunks[i];
    detail.replaceChildren();
    detail.dataset.chunk = String(i);
    const title = el("h2", {}, "Chunk #" + i);
    title.style.borderLeft = "6px solid " + c.colour;
    title.style.paddingLeft = "6px";
    detail.appendChild(title);
    const dl = el("dl");
    const facts = [
      ["id", c.id], ["type", c.type],
      ["pages", c.pages.length ? c.pages.join(", ") : "none"],
      ["tokens", String(c.token_count)],
      ["heading path", c.heading_path.join(" › ") || "(none)"],
      ["regions", String(c.regions)],
    ];
    if (c.section_headings.length) facts.push(["merged sections", c.section_headings.join(" · ")]);
    if (c.caption) facts.push(["caption", c.caption]);
    if (c.parent_id) facts.push(["parent", c.parent_id]);
    for (const [k, v] of facts) {
      dl.appendChild(el("dt", {}, k));
      dl.appendChild(el("dd", {"class": "f-" + k.replace(/ /g, "-")}, v));
    }
    detail.appendChild(dl);
    if (c.type === "table" && c.table_html) {
      detail.appendChild(el("h2", {}, "table"));
      detail.appendChild(safeTable(c.table_html));
    }
    detail.appendChild(el("h2", {}, "text (stored)"));
    detail.appendChild(el("pre", {"class": "chunk-text"}, c.text));
    if (!data.embed_text_known) {
      detail.appendChild(el("p", {"class": "hint"},
        "embed_text: not stored (the store keeps the vector, not the text embedded)."));
      mark(i);
      return;
    }
    detail.appendChild(el("h2", {}, "embed_text (marked: what embedding adds or changes)"));
    const pre = el("pre", {"class": "chunk-embed"});
    for (const [part, marked] of diffParts(c.text, c.embed_text)) {
      if (part) pre.appendChild(marked ? el("mark", {}, part) : document.createTextNode(part));
    }
    detail.appendChild(pre);
    mark(i);
  }

  function mark(i) {
    for (const node of document.querySelectorAll(".selected")) node.classList.remove("selected");
    for (const node of document.querySelectorAll('[data-chunk="' + i + '"]')) {
      if (node !== detail) node.classList.add("selected");
    }
  }

  function reveal(i) {
    show(i);
    const target = document.querySelector('.region[data-chunk="' + i + '"], .card[data-chunk="' + i + '"]');
    if (target) target.scrollIntoView({block: "center"});
  }

  // A click picks among every chunk whose box holds the point (smallest first): a
  // table split into row groups draws one box per group in the same place, so
  // clicking again steps to the next chunk under the pointer.
  document.getElementById("pages").addEventListener("click", (event) => {
    const hit = event.target.closest("[data-chunk]");
    if (!hit) return;
    const sheet = hit.closest(".sheet");
    if (!sheet) { show(Number(hit.dataset.chunk)); return; }
    const under = [];
    for (const r of sheet.querySelectorAll(".region")) {
      const b = r.getBoundingClientRect();
      if (r.style.display !== "none" && event.clientX >= b.left && event.clientX <= b.right &&
          event.clientY >= b.top && event.clientY <= b.bottom) {
        under.push([b.width * b.height, Number(r.dataset.chunk)]);
      }
    }
    under.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const ids = [...new Set(under.map((u) => u[1]))];
    if (!ids.length) { show(Number(hit.dataset.chunk)); return; }
    const current = ids.indexOf(Number(detail.dataset.chunk));
    show(ids[current < 0 ? 0 : (current + 1) % ids.length]);
  });

  // Heading tree: a node's button lists its chunks below the tree.
  const list = document.getElementById("node-chunks");
  function listChunks(node, button) {
    for (const b of document.querySelectorAll("#tree button.active")) b.classList.remove("active");
    button.classList.add("active");
    list.replaceChildren(el("h2", {}, node.title + " — " + node.chunks.length + " chunks"));
    for (const i of node.chunks) {
      const c = chunks[i];
      const b = el("button", {"data-list-chunk": String(i)});
      const dot = el("span", {"class": "dot"});
      dot.style.background = c.colour;
      b.appendChild(dot);
      b.appendChild(document.createTextNode(
        "#" + i + " " + c.type + (c.pages.length ? " p." + c.pages[0] : "") + " · " +
        c.text.replace(/\s+/g, " ").slice(0, 70)));
      b.addEventListener("click", () => reveal(i));
      list.appendChild(b);
    }
  }
  function tree(nodes) {
    const ul = el("ul");
    for (const node of nodes) {
      const li = el("li");
      const b = el("button", {"class": "heading"}, node.title + " (" + node.chunks.length + ")");
      b.addEventListener("click", () => listChunks(node, b));
      li.appendChild(b);
      if (node.children.length) li.appendChild(tree(node.children));
      ul.appendChild(li);
    }
    return ul;
  }
  document.getElementById("tree").appendChild(tree(data.tree));

  // Page images load when their page comes near the viewport.
  const images = document.querySelectorAll("img.page-img[data-src]");
  function load(img) {
    if (!img.getAttribute("src")) img.setAttribute("src", img.dataset.src);
  }
  if ("IntersectionObserver" in window) {
    const seen = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) { load(entry.target); seen.unobserve(entry.target); }
      }
    }, {rootMargin: "1200px 0px"});
    for (const img of images) seen.observe(img);
  } else {
    for (const img of images) load(img);
  }

  const m = /^#chunk=(\d+)$/.exec(location.hash);
  if (m && chunks[Number(m[1])]) reveal(Number(m[1]));
})();
