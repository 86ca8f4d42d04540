// Draw every chart on the page from its data-spec attribute (Vega-Lite JSON).
// Material's instant navigation swaps pages without reloading scripts, and re-runs
// inline scripts without their attributes, so charts are drawn on each document$ event.
(function () {
  function drawCharts() {
    document.querySelectorAll("div.vega-chart[data-spec]").forEach(function (el) {
      if (el.dataset.drawn) return;
      el.dataset.drawn = "1";
      var spec = JSON.parse(el.getAttribute("data-spec"));
      window.vegaEmbed(el, spec, { actions: false, renderer: "svg" }).catch(function (err) {
        el.textContent = "Chart failed to render: " + err;
        console.error(err);
      });
    });
  }
  if (window.document$) {
    window.document$.subscribe(drawCharts);
  } else {
    document.addEventListener("DOMContentLoaded", drawCharts);
  }
})();
