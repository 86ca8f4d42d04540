// A notebook page (mkdocs-jupyter) in the page's language: the code cells' copy buttons,
// which mkdocs-jupyter writes in English ("Copy to Clipboard", and a "Copied!" notice shown
// for a second after a copy), take their words from javascripts/i18n.js (loaded first).
// Material's instant navigation swaps pages without reloading scripts: run on document$.
(function () {
  "use strict";

  function translate() {
    const t = window.liveI18n.t;
    for (const button of document.querySelectorAll("clipboard-copy")) {
      button.setAttribute("aria-label", t("Copy to Clipboard"));
      if (button.hasAttribute("title")) button.setAttribute("title", t("Copy to Clipboard"));
      const notice = button.querySelector(".notice");
      if (notice) notice.textContent = t("Copied!");
    }
    // nbconvert's input prompts, "In [1]:", in the page's language ("Entrée [1] :")
    for (const prompt of document.querySelectorAll(".jp-InputPrompt")) {
      const m = prompt.textContent.trim().match(/^In\s*\[(\d*)\]:$/);
      if (m) prompt.textContent = t("In [{n}]:", { n: m[1] });
    }
  }

  if (window.document$) window.document$.subscribe(translate);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", translate);
  else translate();
})();
