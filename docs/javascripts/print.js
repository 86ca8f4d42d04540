// Print in the light palette. Paper is white and browsers drop page backgrounds when
// printing, so a page in the dark palette would print light text on white. Switching
// body's data-md-color-scheme for the print turns every Material colour back to the
// light one at once (the engine's charts.js redraws the charts in their light config too); the
// reader's own choice comes back after. Printing does not change the saved choice:
// Material stores that from its toggle, not from this attribute.
(function () {
  var saved = null;

  function toPaper() {
    if (saved !== null) return;
    saved = document.body.getAttribute("data-md-color-scheme");
    if (saved !== "default") document.body.setAttribute("data-md-color-scheme", "default");
  }

  function toScreen() {
    if (saved === null) return;
    if (saved !== "default") document.body.setAttribute("data-md-color-scheme", saved);
    saved = null;
  }

  window.addEventListener("beforeprint", toPaper);
  window.addEventListener("afterprint", toScreen);
  // Print previews and headless PDF renderers switch the media type without the events.
  var print = window.matchMedia("print");
  print.addEventListener("change", function (e) { (e.matches ? toPaper : toScreen)(); });
})();
