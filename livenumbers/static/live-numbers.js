// Serve only: the key listing (livenumbers/authoring.py). Drawn from document$, so that
// Material's instant navigation draws it too.
(function () {
  const LIMIT = 200;
  function draw(root, data) {
    const find = root.querySelector(".live-numbers-find"), body = root.querySelector("tbody");
    const count = root.querySelector(".live-numbers-count");
    const button = (text) => {
      const b = document.createElement("button");
      b.type = "button"; b.className = "live-copy"; b.textContent = text; b.title = "copy";
      b.addEventListener("click", () => {
        const done = () => { b.dataset.copied = "yes"; b.title = "copied"; };
        if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, done); else done();
      });
      return b;
    };
    const update = () => {
      const words = find.value.toLowerCase().split(/\s+/).filter(Boolean);
      const hits = data.keys.filter(r => words.every(w => r[0].toLowerCase().includes(w)));
      body.replaceChildren(...hits.slice(0, LIMIT).map(r => {
        const tr = document.createElement("tr");
        tr.dataset.key = r[0];
        [r[0], r[1], r[2], r[3], r[4]].forEach((v, i) => {
          const td = document.createElement("td");
          if (i === 0) { const c = document.createElement("code"); c.textContent = v; td.append(c); } else td.textContent = v;
          tr.append(td);
        });
        const paste = document.createElement("td");
        paste.append(button(r[5]));
        if (r[6]) paste.append(document.createElement("br"), button(r[6]));
        tr.append(paste);
        return tr;
      }));
      count.textContent = `${hits.length} of ${data.keys.length} keys` + (hits.length > LIMIT ? `, first ${LIMIT} shown` : "");
    };
    find.addEventListener("input", update);
    update();
  }
  function init() {
    const root = document.querySelector(".live-numbers");
    if (!root || root.dataset.drawn) return;
    root.dataset.drawn = "yes";
    fetch(root.dataset.src).then(r => r.json()).then(data => draw(root, data));
  }
  if (window.document$) window.document$.subscribe(init); else document.addEventListener("DOMContentLoaded", init);
})();
