// The site's editions (English at /, French at /fr/: mkdocs.yml's i18n plugin), as a reader
// moves between them. Material's instant navigation swaps a page's body but keeps the first
// page's <html lang>, and its language switcher, whose editions share one root, sends a
// reader to the other edition's home. So, on every page Material shows:
// - <html lang> is the edition the address is in, once instant navigation has swapped a
//   page in (a screen reader reads the page in it);
// - a switcher link goes to the same page in that edition, by a full load (every page
//   exists in every edition: the numbers gate fails a build where one does not), which
//   also gives the reader that edition's search index (livenumbers/editions.py).
// The editions are the switcher's own links (hreflang, href): nothing here names a language.
// Those are relative to the page first loaded ("../../fr/": the site may be published
// anywhere), and instant navigation keeps the header they are in while the address
// changes: they are made absolute at once, as Material does with the links it swaps in.
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

  // The page first loaded keeps the lang it was built with: it is its text's language even
  // at another edition's address (a host serves /404.html, the English one, for /fr/...).
  let swapped = false;

  function settle() {
    const here = swapped && current(editions());
    swapped = true;
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

  for (const a of document.querySelectorAll(".md-select__link[hreflang]")) a.href = a.href;

  if (typeof document$ !== "undefined") document$.subscribe(settle);
  else settle();
})();
