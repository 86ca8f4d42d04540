// The engine's chart drawing (published as assets/javascripts/live-charts.js beside the Vega
// bundle, and added to the site's scripts by the plugin wherever the source has charts):
// draw every chart on the page from its data-spec attribute (Vega-Lite JSON), in the
// colours of the reader's palette. On any MkDocs theme the charts are drawn once the page
// is loaded. Under Material, whose instant navigation swaps pages without reloading
// scripts, they are drawn on each document$ event, and the palette toggle (body's
// data-md-color-scheme) redraws them. A site's own scripts may offer: liveI18n (the
// failure message in the page's language) and a11yScrollRegions (called once a chart is
// drawn).
(function () {
  // The marks' colours are the same in both palettes (so a colour means the same lens or
  // model in either, and a chart prints from either): Okabe & Ito's colour-blind-safe
  // hues, as mid-tones that keep 3.4:1 or more on white and on slate (WCAG 1.4.11 asks
  // 3:1). Text, axes and background follow the palette; text keeps 4.5:1 on the chart.
  var CATEGORY = ["#2a84c8", "#d55e00", "#009e73", "#c15fa0", "#7b61ff", "#9d755d"];
  var THEMES = {
    default: { text: "#212121", muted: "#424242", domain: "#757575", grid: "#e0e0e0" },
    slate: { text: "#e2e4e9", muted: "#c3c7d1", domain: "#9aa0ac", grid: "#3a3f4b" },
  };

  function scheme() {
    var name = document.body.getAttribute("data-md-color-scheme");
    return THEMES[name] ? name : "default";
  }

  // A Vega-Lite config for one palette. The background is the page's own, read from the
  // stylesheet, so the chart sits on the page rather than in a white box at night.
  function config(name) {
    var t = THEMES[name];
    var axis = {
      domainColor: t.domain, tickColor: t.domain, gridColor: t.grid,
      labelColor: t.muted, titleColor: t.text,
    };
    return {
      background: getComputedStyle(document.body).backgroundColor || "transparent",
      view: { stroke: t.grid },
      axis: axis,
      // Under the chart, not beside it: on a phone the chart scrolls sideways in its
      // frame, and a legend on the right would start off screen. A legend for dashes
      // (not colours) draws its symbols in the text's colour, not Vega's black.
      legend: {
        labelColor: t.muted, titleColor: t.text, orient: "bottom",
        symbolBaseStrokeColor: t.text, symbolBaseFillColor: "transparent",
      },
      header: { labelColor: t.text, titleColor: t.text },
      title: { color: t.text, subtitleColor: t.muted },
      range: { category: CATEGORY },
      // Each chart is one image named by its text alternative (the frame's role="img",
      // whose children are presentational): no ARIA label or role on each of its
      // thousands of marks and on its axes, which assistive technology (and axe: 17,000
      // elements on an evidence page) would otherwise walk.
      aria: false, mark: { aria: false },
    };
  }

  function draw(el) {
    var name = scheme();
    if (el.dataset.drawn === name) return;
    el.dataset.drawn = name;
    if (el.__view) el.__view.finalize();  // free the previous drawing's listeners
    var token = (el.__token = (el.__token || 0) + 1);
    var spec = JSON.parse(el.getAttribute("data-spec"));
    window.vegaEmbed(el, spec, { actions: false, renderer: "svg", config: config(name) })
      .then(function (result) {
        if (token !== el.__token) return result.view.finalize();  // toggled again meanwhile
        el.__view = result.view;
        el.dataset.scheme = name;  // what the chart on screen was drawn with (tests read it)
        if (window.a11yScrollRegions) window.a11yScrollRegions();
      })
      .catch(function (err) {
        el.textContent = window.liveI18n
          ? window.liveI18n.t("Chart failed to render: {error}", { error: err })
          : "Chart failed to render: " + err;
        console.error(err);
      });
  }

  function drawCharts() {
    document.querySelectorAll("div.vega-chart[data-spec]").forEach(draw);
  }

  // body survives instant navigation, so one observer serves every page.
  function watchPalette() {
    new MutationObserver(drawCharts).observe(document.body, {
      attributes: true, attributeFilter: ["data-md-color-scheme"],
    });
  }

  if (window.document$) {
    window.document$.subscribe(drawCharts);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawCharts);
  } else {
    drawCharts();   // loaded late (a theme that puts scripts after the page, or async)
  }
  if (document.body) watchPalette();
  else document.addEventListener("DOMContentLoaded", watchPalette);
})();
