// Keyboard access to boxes that scroll sideways: a wide table, a notebook's code cell,
// a chart wider than a phone. A box that scrolls must be focusable, or a keyboard user
// cannot reach what is past its edge (WCAG 2.1.1; axe: scrollable-region-focusable).
// Each such box gets tabindex="0", role="region" and a name, and loses them again when
// it stops overflowing (a wider window), so it is never a tab stop for nothing.
// Material's instant navigation swaps pages without reloading scripts: run on document$.
// The names are in the page's language (javascripts/i18n.js, loaded first).
(function () {
  var t = window.liveI18n.t;
  var BOXES = [
    [".md-typeset__scrollwrap", tableName],
    [".jupyter-wrapper .highlight-ipynb, .jupyter-wrapper .jp-OutputArea-output", codeName],
    [".chart-frame", null],  // role="img", named by its text alternative already
  ];

  function text(el) {
    return el ? el.textContent.replace(/\s+/g, " ").trim() : "";
  }

  function tableName(box) {
    var table = box.querySelector("table");
    var caption = table && table.querySelector("caption");
    if (caption) return t("Table: {name}", { name: text(caption) });
    var heads = table ? [].map.call(table.querySelectorAll("thead th"), text).filter(Boolean) : [];
    var name = t("Table: {name}", { name: heads.length ? heads.join(", ") : t("wide table") });
    return t("{name} (scrolls sideways)", { name: name.length > 120 ? name.slice(0, 117) + "…" : name });
  }

  // "Code cell In [2]", "Output of code cell Out[2]": the prompts the notebook shows.
  function codeName(box) {
    var output = box.classList.contains("jp-OutputArea-output");
    var cell = box.closest(output ? ".jp-OutputArea-child" : ".jp-InputArea");
    var prompt = cell && cell.querySelector(output ? ".jp-OutputPrompt" : ".jp-InputPrompt");
    var label = text(prompt).replace(/:$/, "");
    var name = output ? t("Output of code cell {prompt}", { prompt: label }) : t("Code cell {prompt}", { prompt: label });
    return t("{name} (scrolls sideways)", { name: name });
  }

  function overflows(el) {
    return el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
  }

  function mark() {
    BOXES.forEach(function (pair) {
      document.querySelectorAll(pair[0]).forEach(function (box) {
        var scrolls = overflows(box);
        if (scrolls && !box.hasAttribute("data-scroll-region")) {
          box.setAttribute("data-scroll-region", "");
          box.setAttribute("tabindex", "0");
          // A chart's frame is role="img" with its text alternative: keep that role
          // and name; it only needs the tab stop.
          if (!box.hasAttribute("role")) {
            box.setAttribute("role", "region");
            box.setAttribute("aria-label", pair[1](box));
          }
        } else if (!scrolls && box.hasAttribute("data-scroll-region")) {
          box.removeAttribute("data-scroll-region");
          box.removeAttribute("tabindex");
          if (box.getAttribute("role") === "region") {
            box.removeAttribute("role");
            box.removeAttribute("aria-label");
          }
        }
      });
    });
  }

  var pending = 0;
  function soon() {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(mark);
  }

  window.a11yScrollRegions = mark;  // the engine's chart drawing (livenumbers/static/charts.js) calls it once a chart is drawn
  if (window.document$) {
    window.document$.subscribe(soon);
  } else {
    document.addEventListener("DOMContentLoaded", soon);
  }
  window.addEventListener("resize", soon);
})();
