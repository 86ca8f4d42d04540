// The scripts' words in the page's language (docs/javascripts/i18n.js): English exactly as
// the scripts printed it before, French from the catalogue, and no t("…") in the scripts
// that the catalogue lacks. Run: node --test tests/js/
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const I18N_PATH = require.resolve("../../docs/javascripts/i18n.js");
const i18n = require(I18N_PATH);
const en = i18n.forLang("en");
const fr = i18n.forLang("fr");

const JS = path.join(__dirname, "..", "..", "docs", "javascripts");
// The scripts whose reader-visible text goes through t().
// (The engine's chart drawing, livenumbers/static/charts.js, calls liveI18n.t where a site has it.)
const SCRIPTS = ["instrument.js", "../../livenumbers/static/charts.js", "a11y.js", "print.js", "notebook.js",
  ...fs.readdirSync(path.join(JS, "instrument")).filter((f) => f.endsWith(".js")).map((f) => `instrument/${f}`)];

// The English keys of every t("…") call in a script: `t(` or `liveI18n.t(`, whose first
// argument must be a string literal, or literals joined by + (a long sentence over lines).
function tCalls(source, file) {
  const keys = [], bad = [];
  const code = source.split("\n").map((line) => (/^\s*(\/\/|\*|\/\*)/.test(line) ? "" : line)).join("\n");
  const call = /(?<![\w$.]|function )t\(|liveI18n\.t\(/g;  // not t's own definition
  let m;
  while ((m = call.exec(code))) {
    let at = m.index + m[0].length, key = "", ok = false;
    for (;;) {
      const lit = /^\s*"((?:[^"\\\n]|\\.)*)"/.exec(code.slice(at));
      if (!lit) break;
      key += JSON.parse(`"${lit[1]}"`);
      at += lit[0].length;
      const plus = /^\s*\+/.exec(code.slice(at));
      if (plus) { at += plus[0].length; continue; }
      ok = /^\s*[,)]/.test(code.slice(at));
      break;
    }
    const line = code.slice(0, m.index).split("\n").length;
    if (ok) keys.push({ key, where: `${file}:${line}` });
    else bad.push(`${file}:${line}`);
  }
  return { keys, bad };
}

const slots = (text) => [...new Set([...text.matchAll(/\{(\w+)(?:\|[^]*?)?\}/g)].map((m) => m[1]))].sort();
const SAMPLE = (key) => Object.fromEntries(slots(key).map((n, i) => [n, `V${i}`]));

test("English: t gives back the English, with its placeholders filled", () => {
  for (const key of Object.keys(i18n.catalogue)) {
    const values = SAMPLE(key);
    const want = key.replace(/\{(\w+)\}/g, (_, n) => values[n]);
    assert.equal(en.t(key, values), want, key);
  }
  assert.equal(en.t("Run"), "Run");
  assert.equal(en.t("a string no catalogue has"), "a string no catalogue has");
  assert.equal(en.t("Running the model: layer {layer} of {layers}", { layer: 3, layers: 6 }),
    "Running the model: layer 3 of 6");
  assert.equal(en.t("“{word}”", { word: "cat" }), "“cat”");
});

test("English: numbers exactly as the scripts printed them", () => {
  for (const x of [0.265, 0, 1, 0.00049, 0.99951, 0.125, NaN, -0.0001]) {
    assert.equal(en.pct(x), `${(x * 100).toFixed(1)}%`);
    assert.equal(en.pct(x, 0), `${(x * 100).toFixed(0)}%`);
  }
  assert.equal(en.num(12.3456, { digits: 1 }), "12.3");
  assert.equal(en.num(0.000321, { exponent: 1 }), (0.000321).toExponential(1));
  assert.equal(en.num(123456), "123456");
  // byte for byte what toFixed, toExponential and String print, negatives and e-notation included
  for (const x of [1.234e-5, 1e-5, -1.234e-5, 3.2, 12345, 0, -0.5, -0.012, 9.96e-5, 1e-10, -1234567.5, NaN]) {
    for (const d of [0, 1, 2]) {
      assert.equal(en.num(x, { exponent: d }), x.toExponential(d), `${x} exponent ${d}`);
      assert.equal(en.num(x, { digits: d }), x.toFixed(d), `${x} digits ${d}`);
      assert.equal(en.pct(x, d), `${(x * 100).toFixed(d)}%`, `${x} pct ${d}`);
    }
    assert.equal(en.num(x), String(x));
  }
  assert.equal(en.data("attention weights α"), "attention weights α");
  assert.equal(en.data(undefined), undefined);
});

test("the page's language: French where <html lang> starts with fr, English otherwise", () => {
  const load = (lang) => {
    delete require.cache[I18N_PATH];
    global.document = { documentElement: { lang } };
    try { return require(I18N_PATH); } finally { delete global.document; delete require.cache[I18N_PATH]; }
  };
  for (const [lang, want] of [["fr", "fr"], ["fr-CA", "fr"], ["FR", "fr"], ["en", "en"], ["", "en"], ["de", "en"]]) {
    const api = load(lang);
    global.document = { documentElement: { lang } };
    try {
      assert.equal(api.lang, want, lang);
      assert.equal(api.t("Run"), want === "fr" ? "Lancer" : "Run");
    } finally { delete global.document; }
  }
  assert.equal(i18n.lang, "en"); // Node: no document
  i18n.setLang("fr");
  assert.equal(i18n.t("Word"), "Mot");
  i18n.setLang(null);
  assert.equal(i18n.t("Word"), "Word");
});

test("French: real strings, placeholders filled, typography", () => {
  assert.equal(fr.t("Run"), "Lancer");
  assert.equal(fr.t("Sink"), "Puits");
  assert.equal(fr.t("Lens (compare)"), "Lentille (comparer)");
  assert.equal(fr.t("Running the model: layer {layer} of {layers}", { layer: 3, layers: 6 }),
    "Exécution du modèle\u00a0: couche 3 sur 6");
  assert.equal(fr.t("“{word}”", { word: "chat" }), "«\u00a0chat\u00a0»");
  assert.equal(fr.t("{word}: layer {layer}, head {head}", { word: "chat", layer: 2, head: 7 }),
    "chat\u00a0: couche 2, tête 7");
  assert.equal(fr.t("; sink {sink}; effect {effect}", { sink: "1", effect: "2" }), "\u202f; puits 1\u202f; effet 2");
  assert.equal(fr.t("Warning: "), "Avertissement\u00a0: ");
  // a value is put in as it is: its braces or colons are not read as a template's
  assert.equal(fr.t("The row of {word}", { word: "{n} :" }), "La ligne de {n} :");
  // a form picked by a count
  assert.equal(fr.t("{n} sentences", { n: 1 }), "1 phrase");
  assert.equal(fr.t("{n} sentences", { n: 270 }), "270 phrases");
  assert.equal(fr.t("{k} of {n} sentences match", { k: 1, n: 270 }), "1 phrase sur 270 correspond");
  assert.equal(fr.t("{k} of {n} sentences match", { k: 12, n: 270 }), "12 phrases sur 270 correspondent");
  assert.match(fr.t("Your sentence has {tokens} tokens; the model reads at most {max}, [CLS] and [SEP] included. " +
    "Shown: its first {kept} words ({shown} tokens); the last {dropped} words are left out.",
  { tokens: 600, max: 512, kept: 80, shown: 510, dropped: 1 }),
  /ses 80 premiers mots \(510 tokens\)\u202f; le dernier mot est laissé de côté\.$/);
  // what the data says, where the catalogue knows it
  assert.equal(fr.data("attention weights α"), "poids d'attention α");
  assert.equal(fr.data("all-MiniLM-L6-v2 (6 layers × 12 heads)"), "all-MiniLM-L6-v2 (6 couches × 12 têtes)");
  assert.equal(fr.data("a title no catalogue has"), "a title no catalogue has");
});

test("French numbers: decimal comma, narrow no-break space before %", () => {
  assert.equal(fr.pct(0.265), "26,5\u202f%");
  assert.equal(fr.pct(0.5, 0), "50\u202f%");
  assert.equal(fr.pct(1), "100,0\u202f%");
  assert.equal(fr.num(12.3456, { digits: 1 }), "12,3");
  assert.equal(fr.num(0.000321, { exponent: 1 }), "3,2\u00a0×\u00a010⁻⁴");
  assert.equal(fr.num(123456), "123\u202f456");
  assert.equal(fr.t("{n} MB", { n: fr.num(23.45, { digits: 1 }) }), "23,4\u00a0Mo");
  // the same digits as English, where toFixed and a decimal rounding would differ
  for (const x of [0.0105, 0.00125, 0.2675, 0.99951]) {
    assert.equal(fr.pct(x).replace(",", ".").replace("\u202f%", "%"), en.pct(x), String(x));
  }
});

test("French scientific notation: « 1,2 × 10⁻⁵ », as the Python engine prints it", () => {
  // livenumbers/formats.py: format_value(k, x, "sci:N", "fr"), the same digits as English
  const cases = [
    [1.234e-5, 1, "1,2\u00a0×\u00a010⁻⁵"],
    [1e-5, 0, "10⁻⁵"],                       // a mantissa of exactly 1, no digits: the power alone
    [1e-5, 1, "1,0\u00a0×\u00a010⁻⁵"],         // 1,0 is not 1: printed
    [9.96e-5, 1, "1,0\u00a0×\u00a010⁻⁴"],      // rounded up into the next power
    [9.6e-5, 0, "10⁻⁴"],
    [-1.234e-5, 1, "\u22121,2\u00a0×\u00a010⁻⁵"],
    [-1e-5, 0, "\u22121\u00a0×\u00a010⁻⁵"],
    [3.2, 1, "3,2"],                          // 10⁰: the mantissa alone
    [0, 1, "0,0"],
    [12345, 2, "1,23\u00a0×\u00a010⁴"],
    [1e-10, 0, "10⁻¹⁰"],
    [4.1e-6, 1, "4,1\u00a0×\u00a010⁻⁶"],
  ];
  for (const [x, d, want] of cases) assert.equal(fr.num(x, { exponent: d }), want, `${x} exponent ${d}`);
  assert.equal(fr.num(NaN, { exponent: 1 }), "NaN");
  // no e-notation, no hyphen-minus, whatever the size
  for (let e = -30; e <= 30; e++) {
    for (const x of [1.5 * 10 ** e, -7.25 * 10 ** e]) {
      const text = fr.num(x, { exponent: 1 });
      assert.doesNotMatch(text, /[eE+-]/, `${x}: ${text}`);
      assert.match(text, /^\u2212?\d,\d(\u00a0×\u00a010⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?$/, `${x}: ${text}`);
    }
  }
});

test("French negatives take the minus sign U+2212, in num and pct", () => {
  assert.equal(fr.num(-0.5, { digits: 2 }), "\u22120,50");
  assert.equal(fr.pct(-0.012), "\u22121,2\u202f%");
  // A zero as printed has no minus (English prints "-0.0%"; the engine's French does not).
  assert.equal(fr.pct(-0.00001), "0,0\u202f%");
  assert.equal(fr.num(-0.001, { digits: 2 }), "0,00");
  assert.equal(fr.num(-1234567.5, { digits: 1 }), "\u22121\u202f234\u202f567,5");
  assert.equal(fr.num(-3), "\u22123");
  assert.equal(fr.num(-1234.5), "\u22121\u202f234,5");
  assert.equal(fr.num(0.5, { digits: 2 }), "0,50");
  for (const x of [-0.5, -0.012, -1e-7, -42, -1234.5678]) {
    for (const text of [fr.num(x, { digits: 2 }), fr.num(x), fr.pct(x), fr.pct(x, 0), fr.num(x, { exponent: 1 })]) {
      const zero = !/[1-9]/.test(text);
      assert.ok(text.startsWith("\u2212") !== zero && !text.includes("-"), `${x}: ${text}`);
    }
  }
});

test("every register of the corpus has its French name", () => {
  // docs/study.yml names the corpus (docs/corpus.tsv): register<TAB>sentence, a line each
  const docs = path.join(__dirname, "..", "..", "docs");
  const study = fs.readFileSync(path.join(docs, "study.yml"), "utf8");
  const corpus = (/^corpus:\s*["']?([^"'\s#]+)/m.exec(study) || [null, "corpus.tsv"])[1];
  const registers = new Set(fs.readFileSync(path.join(docs, corpus), "utf8").split("\n")
    .filter((line) => line.trim()).map((line) => line.split("\t")[0].trim()));
  assert.ok(registers.size >= 2, `only ${[...registers]} in ${corpus}: the scan is broken`);
  const missing = [...registers].filter((r) => !Object.hasOwn(i18n.dataCatalogue, r));
  assert.deepEqual(missing, [], `registers of docs/${corpus} with no French name in i18n.js's DATA_FR`);
  // the name the French tables give it (docs/locales/fr.yml), where they give one
  const locale = path.join(docs, "locales", "fr.yml");
  const yml = fs.existsSync(locale) ? fs.readFileSync(locale, "utf8") : "";
  for (const r of registers) {
    const m = new RegExp(`^'?${r}'?:\\s*(.+)$`, "m").exec(yml);
    if (m) assert.equal(fr.data(r), m[1].trim().replace(/^'(.*)'$/, "$1"), `register ${r}`);
  }
  assert.equal(fr.data("news"), "actualités");
  assert.equal(fr.data("technical"), "technique");
  assert.equal(fr.data("lists"), "listes");
  assert.equal(en.data("news"), "news");
});

test("French: the summary's count reads naturally for any counts", () => {
  const key = "{model}, lens {lens}: on {over} of {rows} rows [CLS] and [SEP] bring more than {threshold} of what " +
    "the head brings to the word (the warning); the median row loses {sink} of its weight to them, and " +
    "{punct} to punctuation.";
  const say = (over, rows) => fr.t(key, { model: "m", lens: "α", over, rows, threshold: "50\u202f%", sink: "s", punct: "p" });
  assert.equal(say(0, 6), "m, lentille α\u00a0: 0 ligne sur 6 porte l'avertissement ([CLS] et [SEP] y apportent plus " +
    "de 50\u202f% de ce que la tête apporte au mot)\u202f; la ligne médiane leur cède s de son poids, et p à la ponctuation.");
  assert.match(say(1, 6), /lentille α\u00a0: 1 ligne sur 6 porte l'avertissement \(\[CLS\] et \[SEP\] y apportent plus de 50\u202f%/);
  assert.match(say(3, 17), /: 3 lignes sur 17 portent l'avertissement \(/);
  assert.match(say(1, 1), /: 1 ligne sur 1 porte l'avertissement \(/);
  for (const [over, rows] of [[0, 6], [1, 6], [3, 17], [1, 1]]) assert.doesNotMatch(say(over, rows), /sur \d+ lignes? sur/);
});

test("French: none of the calques a reader flagged", () => {
  const all = [...Object.values(i18n.catalogue), ...Object.values(i18n.dataCatalogue)].join("\n");
  for (const [bad, why] of [
    [/sur \{\w+\} \{\w+\|ligne\|lignes\} sur/, "« sur 1 ligne sur 6 »"],
    [/après le départ de/, "« après le départ de … vers »"],
    [/embeddings?/i, "the site's term is « plongement »"],
    [/visionneuse/i, "« visualiseur »"],
    [/(?<!\p{L})enregistré/u, "registered before it was measured: « préenregistré »"],
    [/pour sommer/, "« pour que la somme fasse 100 % »"],
    [/qui lui est propre/, "« une phrase qui lui est propre »"],
    [/une phrase à vous/, "« une phrase de votre choix »"],
    [/lit (cette|l') ?part|que lit l'avertissement/, "the warning « se fonde sur » a share"],
  ]) assert.doesNotMatch(all, bad, why);
});

test("every French entry keeps its English key's placeholders", () => {
  for (const table of [i18n.catalogue, i18n.dataCatalogue]) {
    for (const [key, french] of Object.entries(table)) {
      assert.deepEqual(slots(french), slots(key), key);
      assert.ok(french.trim(), `empty French for ${key}`);
      // a leading or trailing space joins a piece to the next: keep it (a French piece that
      // opens on "; " takes the space French sets before it)
      if (!/^[;:!?]/.test(key)) assert.equal(/^\s/.test(french), /^\s/.test(key), `leading space: ${key}`);
      assert.equal(/\s$/.test(french), /\s$/.test(key), `trailing space: ${key}`);
    }
  }
});

test("French typography: no-break spaces in « », before : and before ; ! ?", () => {
  const data = Object.entries(i18n.dataCatalogue).map(([k, v]) => [k, i18n.typeset(v)]);
  for (const [key, french] of [...Object.entries(fr.catalogue), ...data]) {
    const text = french.replace(/\{[^{}]*\}/g, "X");
    assert.doesNotMatch(text, /[^\u00a0]:/, `":" without a no-break space before it: ${key}`);
    assert.doesNotMatch(text, /[^\u202f][;!?]/, `";", "!" or "?" without a narrow no-break space: ${key}`);
    assert.doesNotMatch(text, /«[^\u00a0]|[^\u00a0]»/, `« » without no-break spaces: ${key}`);
    assert.doesNotMatch(text, /[0-9X] %/, `a number's % after a plain space: ${key}`);
    assert.doesNotMatch(text, /[“”]/, `English quotation marks: ${key}`);
  }
});

test("every t(\"…\") in the scripts has its French, and takes a string literal", () => {
  const missing = [], bad = [];
  let count = 0;
  for (const file of SCRIPTS) {
    const found = tCalls(fs.readFileSync(path.join(JS, file), "utf8"), file);
    bad.push(...found.bad);
    for (const { key, where } of found.keys) {
      count++;
      if (!Object.hasOwn(i18n.catalogue, key)) missing.push(`${where}: ${JSON.stringify(key)}`);
    }
  }
  assert.ok(count > 100, `only ${count} t() calls found: the scan is broken`);
  assert.deepEqual(bad, [], "t() whose first argument is not a string literal");
  assert.deepEqual(missing, [], "t() keys missing from the French catalogue");
});

test("the scan itself: it finds keys split over lines and flags a non-literal", () => {
  const src = 'function t(s, v) {}\nx = t("a {b} " +\n  "c", { b });\n// t("in a comment")\ny = liveI18n.t("d");\nz = t(name);\nq = set("no");\n';
  const { keys, bad } = tCalls(src, "f.js");
  assert.deepEqual(keys.map((k) => k.key), ["a {b} c", "d"]);
  assert.deepEqual(bad, ["f.js:6"]);
});

test("the catalogue has no entry that no script uses", () => {
  const used = new Set();
  for (const file of SCRIPTS) {
    for (const { key } of tCalls(fs.readFileSync(path.join(JS, file), "utf8"), file).keys) used.add(key);
  }
  assert.deepEqual(Object.keys(i18n.catalogue).filter((k) => !used.has(k)), []);
});
