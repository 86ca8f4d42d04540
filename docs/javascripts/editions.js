// The site's editions (English at /, French at /fr/: mkdocs.yml's i18n plugin), as a reader
// moves between them. Material's instant navigation swaps a page's body but keeps the first
// page's <html lang>, and its language switcher, whose editions share one root, sends a
// reader to the other edition's home. So, on every page Material shows:
// - <html lang> is the edition the address is in (a screen reader reads the page in it);
// - a switcher link goes to the same page in that edition, by a full load (every page
//   exists in every edition: the numbers gate fails a build where one does not).
// The editions are the switcher's own links (hreflang, href): nothing here names a language.
(function () {
  "use strict";

  function editions() {
    return [...document.querySelectorAll(".md-select__link[hreflang]")]
      .map((a) => ({ lang: a.hreflang, href: a.href }))
      .sort((a, b) => b.href.length - a.href.length);   // the longest address first: /fr/ before /
  }

  function current(list) {
    return list.find((e) => location.href.startsWith(e.href));
  }

  function settle() {
    const here = current(editions());
    if (here && document.documentElement.lang !== here.lang) document.documentElement.lang = here.lang;
  }

  document.addEventListener("click", (ev) => {
    const link = ev.target instanceof Element && ev.target.closest(".md-select__link[hreflang]");
    if (!link || ev.metaKey || ev.ctrlKey || ev.shiftKey) return;
    const list = editions(), here = current(list);
    if (!here) return;
    ev.preventDefault();
    ev.stopPropagation();   // before Material's own handler, which would send the reader home
    location.assign(link.href + location.href.slice(here.href.length));
  }, true);

  if (typeof document$ !== "undefined") document$.subscribe(settle);
  else settle();
})();
