// The words the site's scripts show a reader, in the page's language: English, or French
// on the French edition (mkdocs-static-i18n builds it under /fr/, where Material sets
// <html lang="fr">). Loaded first, as a classic script, by the page (mkdocs.yml's
// extra_javascript) and by the runtime's worker (importScripts); Node's tests require it.
//
//   liveI18n.lang              "fr" when the page's lang starts with "fr", else "en"
//   liveI18n.t(english, values) the English template, or its French from FR below, with
//                               {name} filled from `values`
//   liveI18n.num(x, options)   a number: {digits: N} fixed, {exponent: N} scientific,
//                               none: as String(x) (French: Intl's digits)
//   liveI18n.pct(x, digits)    a share as a percentage
//   liveI18n.data(text)        a text from the site's data (index.json, written by
//                               model/), in French where DATA_FR knows it, else as it is
//   liveI18n.forLang(lang)     the same, for one language (the worker, the tests)
//
// English is printed exactly as the scripts printed it before (x.toFixed(1) + "%"); French
// takes the same digits, with Intl.NumberFormat's separators, the percent sign set off by a
// narrow no-break space ("26,5 %"), the minus sign U+2212 ("−0,50") and a power of ten
// written out ("1,2 × 10⁻⁵"), as the Python engine prints French (livenumbers/formats.py).
// A French template may pick a form by a count: "{n|phrase|phrases}" (Intl.PluralRules: 0
// and 1 are singular in French).
//
// The French below is written with plain spaces; typeset() puts in the no-break spaces of
// French typography once, when this file loads: U+00A0 inside « » and before ":",
// U+202F before ";", "!", "?" and a number's "%". tests/js/i18n.test.js holds every t("…")
// of the scripts to this catalogue.
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.liveI18n = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const FR = {
    // -- instrument.js: small pieces ---------------------------------------------------------
    "“{word}”": "« {word} »",
    "{n} MB": "{n}\u00a0Mo",
    "{label}: {title}": "{label} : {title}",
    " or ": " ou ",
    "{path}: HTTP {status}": "{path} : HTTP {status}",
    "{path}: could not load": "{path} : chargement impossible",
    "the runtime stopped": "la version navigateur s'est arrêtée",
    "The instrument could not start: {error}": "L'instrument n'a pas pu démarrer : {error}",

    // -- the controls ----------------------------------------------------------------------
    "Model": "Modèle",
    "Lens (compare)": "Lentille (comparer)",
    "A sentence of the corpus": "Une phrase du corpus",
    "Find": "Chercher",
    "a word of the sentence": "un mot de la phrase",
    "Register": "Registre",
    "every register": "tous les registres",
    "Sentence": "Phrase",
    "{n} sentences": "{n} {n|phrase|phrases}",
    "{k} of {n} sentences match": "{k} {k|phrase|phrases} sur {n} {k|correspond|correspondent}",
    "No sentence of the {n} matches.": "Aucune des {n} phrases ne correspond.",
    "Your sentence": "Votre phrase",
    "Run": "Lancer",
    "Download": "Téléchargement",

    // -- the runtime: what typing downloads, and its progress ------------------------------
    "{model} has no in-browser runtime on this site; choose {others} to type a sentence.":
      "{model} n'a pas de version navigateur sur ce site ; choisissez {others} pour taper une phrase.",
    "{model} has no in-browser runtime on this site.":
      "{model} n'a pas de runtime dans le navigateur sur ce site.",
    "Runs {model} in your browser; its files are already loaded.":
      "Exécute {model} dans votre navigateur ; ses fichiers sont déjà chargés.",
    "Runs {model} in your browser (its description could not be read: {error}).":
      "Exécute {model} dans votre navigateur (sa description n'a pas pu être lue : {error}).",
    ["Press Enter to run {model} in your browser; nothing you type leaves it. The first sentence " +
    "downloads {once} once (the {layers} layers and the vocabulary), plus {kb} kB of word embeddings " +
    "for each new block of {rows} vocabulary entries your words use (the whole table is {table}, " +
    "never fetched in full). Later sentences reuse what is loaded."]:
      "Appuyez sur Entrée pour exécuter {model} dans votre navigateur ; rien de ce que vous tapez n'en " +
      "sort. La première phrase télécharge {once} une fois pour toutes (les {layers} couches et le " +
      "vocabulaire), plus {kb}\u00a0ko de plongements de mots pour chaque nouveau bloc de {rows} entrées " +
      "du vocabulaire qu'utilisent vos mots (la table entière fait {table} et n'est jamais téléchargée " +
      "en entier). Les phrases suivantes réutilisent ce qui est déjà chargé.",
    "The box is empty: type a sentence, then press Enter.":
      "La zone de saisie est vide : tapez une phrase, puis appuyez sur Entrée.",
    "Computed in your browser: {words} words, {tokens} tokens.":
      "Calculé dans votre navigateur : {words} {words|mot|mots}, {tokens} tokens.",
    "Downloading the model: {total}.": "Téléchargement du modèle : {total}.",
    "Downloading the model": "Téléchargement du modèle",
    "Downloading the model: {loaded} of {total}": "Téléchargement du modèle : {loaded} sur {total}",
    "Running the model": "Exécution du modèle",
    "Running the model: layer {layer} of {layers}": "Exécution du modèle : couche {layer} sur {layers}",
    "Starting the model…": "Démarrage du modèle…",
    ["Nothing to read: every character of this sentence is one the tokenizer drops (control, " +
    "formatting or unassigned characters). Type some words."]:
      "Rien à lire : tous les caractères de cette phrase sont de ceux que le tokeniseur écarte " +
      "(caractères de contrôle, de mise en forme ou non attribués). Tapez des mots.",
    "The first word of this sentence is longer than the model can read at once.":
      "Le premier mot de cette phrase est plus long que ce que le modèle peut lire en une fois.",
    "The model's files could not be fetched ({error}). Check the connection and press Enter again.":
      "Les fichiers du modèle n'ont pas pu être récupérés ({error}). Vérifiez la connexion et appuyez " +
      "de nouveau sur Entrée.",
    "The sentence could not be run: {error}": "La phrase n'a pas pu être traitée : {error}",

    // -- the summary and the notices -------------------------------------------------------
    "No word of this sentence gets a row: it is all punctuation.":
      "Aucun mot de cette phrase n'a de ligne : elle n'est faite que de ponctuation.",
    "{model}, lens {lens}: not measured on this sentence (a sample of the corpus: every {every}th sentence).":
      "{model}, lentille {lens} : pas de mesure sur cette phrase (la mesure porte sur un échantillon du " +
      "corpus : une phrase sur {every}).",
    ["{model}, lens {lens}: on {over} of {rows} rows [CLS] and [SEP] bring more than {threshold} of what " +
    "the head brings to the word (the warning); the median row loses {sink} of its weight to them, and " +
    "{punct} to punctuation."]:
      "{model}, lentille {lens} : {over} {over|ligne|lignes} sur {rows} {over|porte|portent} l'avertissement " +
      "([CLS] et [SEP] y apportent plus de {threshold} de ce que la tête apporte au mot) ; la ligne " +
      "médiane leur cède {sink} de son poids, et {punct} à la ponctuation.",
    ["{model}, lens {lens}: Part 10 found no reading fit to warn on this model (its verdict on the " +
    "mean-ablation truth: {verdict}), so no row is flagged; the median row loses {sink} of its weight to " +
    "[CLS] and [SEP], and {punct} to punctuation."]:
      "{model}, lentille {lens} : la partie 10 n'a trouvé aucune lecture apte à avertir sur ce modèle (son " +
      "verdict sur la vérité par ablation à la moyenne : {verdict}) ; aucune ligne n'est donc signalée ; la ligne médiane cède " +
      "{sink} de son poids à [CLS] et [SEP], et {punct} à la ponctuation.",
    ["This row is not on the head α opens for {word}, where the warning was held to what the sink does: " +
    "here the share is shown, and no warning."]:
      "Cette ligne n'est pas sur la tête qu'α ouvre pour {word}, celle où l'avertissement a été confronté " +
      "à ce que fait le puits : ici la part est montrée, sans avertissement.",
    "not fit": "non apte",
    "undetermined": "indéterminé",
    "not measured": "non mesuré",
    " {n} rows are not measured under {lens} on this head's layer.":
      " {n} {n|ligne n'est pas mesurée|lignes ne sont pas mesurées} sous {lens} sur la couche de cette tête.",
    "{model} cannot run in the browser on this site; choose another model to see a sentence of your own.":
      "{model} ne peut pas tourner dans le navigateur sur ce site ; choisissez un autre modèle pour voir " +
      "une phrase de votre choix.",
    ["This address shows a sentence of its own: {sentence}. To see its rows, run {model} in your browser " +
    "(it downloads about {size} once)."]:
      "Cette adresse contient une phrase hors corpus : {sentence}. Pour en voir les lignes, exécutez " +
      "{model} dans votre navigateur (cela télécharge environ {size}, une fois pour toutes).",
    "This address shows a sentence of its own: {sentence}. To see its rows, run {model} in your browser.":
      "Cette adresse contient une phrase hors corpus : {sentence}. Pour en voir les lignes, exécutez " +
      "{model} dans votre navigateur.",
    "Run the model on it": "Exécuter le modèle sur cette phrase",
    "{fix} is measured when the site is built, on the corpus's sentences only: your sentence is shown under α.":
      "{fix} est mesuré à la construction du site, sur les seules phrases du corpus : votre phrase est " +
      "affichée sous α.",
    ["Your sentence, run by {model} in your browser ({words} words, {tokens} tokens). The heads are the " +
    "rule's, applied here: the same rule as for the corpus, with the positional heads found on the corpus."]:
      "Votre phrase, traitée par {model} dans votre navigateur ({words} {words|mot|mots}, {tokens} tokens). " +
      "Les têtes sont celles de la règle, appliquée ici : la même règle que pour le corpus, avec les têtes " +
      "positionnelles trouvées sur le corpus.",
    ["Your sentence has {tokens} tokens; the model reads at most {max}, [CLS] and [SEP] included. Shown: its " +
    "first {kept} words ({shown} tokens); the last {dropped} words are left out."]:
      "Votre phrase compte {tokens} tokens ; le modèle en lit au plus {max}, [CLS] et [SEP] compris. " +
      "L'instrument montre {kept|son premier mot|ses {kept} premiers mots} ({shown} tokens) ; " +
      "{dropped|le dernier mot est laissé|les {dropped} derniers mots sont laissés} de côté.",
    "Not in the model's vocabulary, so read as {unk}: {words}. Their rows and columns are marked {unk}.":
      "Mots hors du vocabulaire du modèle, donc lus comme {unk} : {words}. Leurs lignes et leurs colonnes " +
      "sont marquées {unk}.",
    ["{fix}: {title}. A layer-level reading (every head, the residual included), so the word's own column " +
    "is large; the sink share counts it, as registered. The head column names the head α opens: the fix " +
    "is read on its layer."]:
      "{fix} : {title}. Une lecture au niveau de la couche (toutes les têtes, connexion résiduelle " +
      "comprise), si bien que la colonne du mot lui-même est grande ; la part de puits la compte, comme " +
      "le prévoit le préenregistrement. La colonne Tête indique la tête qu'ouvre α : le correctif est lu " +
      "sur sa couche.",
    " Value zeroing is measured on every {every}th sentence of the corpus, and only on that layer.":
      " La mise à zéro des valeurs n'est mesurée que sur cette couche, et sur un échantillon du corpus : une phrase " +
      "sur {every}.",

    // -- the table -------------------------------------------------------------------------
    "One row per word: where its attention goes": "Une ligne par mot : où va son attention",
    "Word": "Mot",
    "Head": "Tête",
    "Sink": "Puits",
    "the share of the full row's weight on [CLS] and [SEP], dropped from the display":
      "la part du poids de la ligne complète qui va à [CLS] et [SEP], hors affichage",
    "Effect": "Effet",
    "Ablation": "Ablation",
    ["the sink's share of what this head does to the word, measured by removing its part (corpus " +
    "sentences, the heads the rule opens)"]:
      "la part du puits dans ce que cette tête fait au mot, mesurée en retirant sa part (phrases du " +
      "corpus, têtes qu'ouvre la règle)",
    "Punct.": "Ponct.",
    "Content": "Contenu",
    "not measured on this layer for this sentence (value zeroing: the layer of α's head, on a sample)":
      "non mesurée sur cette couche pour cette phrase (mise à zéro des valeurs : la couche de la tête d'α, sur un " +
      "échantillon)",
    "your pick": "votre choix",
    "the instrument's choice": "le choix de l'instrument",
    "{share} of the full row went to [CLS] and [SEP]": "{share} de la ligne complète va à [CLS] et [SEP]",
    "the sink's share of this head's effect on the word (ablation)":
      "la part du puits dans l'effet de cette tête sur le mot (ablation)",
    "not measured for this head": "non mesurée pour cette tête",
    "{word}: layer {layer}, head {head}": "{word} : couche {layer}, tête {head}",
    " (your pick)": " (votre choix)",
    "; sink {sink}; effect {effect}": " ; puits {sink} ; effet {effect}",
    ", warning: above the threshold": ", avertissement : au-dessus du seuil",
    "; punctuation {punct}; content {mass}": " ; ponctuation {punct} ; contenu {mass}",
    "; open": " ; ouverte",
    "{to}: {share} of the full row of {word}, dropped from the display":
      "{to} : {share} de la ligne complète de {word}, hors affichage",
    "{word} itself: {share} of the full row, dropped from the display":
      "{word} lui-même : {share} de la ligne complète, hors affichage",
    "{from} → {to} (punctuation): {shown} of the displayed row ({full} of the full row)":
      "{from} → {to} (ponctuation) : {shown} de la ligne affichée ({full} de la ligne complète)",
    "{from} → {to}: {shown} of the displayed row ({full} of the full row)":
      "{from} → {to} : {shown} de la ligne affichée ({full} de la ligne complète)",

    // -- the open row's panel --------------------------------------------------------------
    "The row of {word}": "La ligne de {word}",
    " on layer {layer}: not measured under {fix} (a sample of sentences, on the layer of the head α opens).":
      " sur la couche {layer} : non mesurée sous {fix} (un échantillon de phrases, sur la couche de la " +
      "tête qu'ouvre α).",
    " on layer {layer}, head {head} ({why})": " sur la couche {layer}, tête {head} ({why})",
    "Instrument's choice (L{layer} H{head})": "Choix de l'instrument (L{layer} H{head})",
    "the instrument's choice under {lens}": "le choix de l'instrument sous {lens}",
    ", computed here by the same rule": ", calculé ici par la même règle",
    "View this row on another head": "Voir cette ligne sur une autre tête",
    "View on another head:": "Voir sur une autre tête :",
    "Layer": "Couche",
    "for every word": "pour tous les mots",
    ["{sink} of this row went to [CLS] ({cls}) and [SEP] ({sep}), and {self} to {word} itself. The " +
    "displayed weights are the remaining {mass}, renormalized to sum to 100%."]:
      "{sink} de cette ligne va à [CLS] ({cls}) et à [SEP] ({sep}), et {self} à {word} lui-même. Les " +
      "poids affichés sont les {mass} restants, renormalisés pour que la somme fasse 100 %.",
    "effect ": "effet ",
    [" Weighed by the size of what each token carries (‖α f(x)‖ on this head), [CLS] and [SEP] bring " +
    "{effect} of what the head brings to {word}. The warning reads this share: held to what the sink " +
    "does, it is the reading that is right when it warns ("]:
      " Chaque poids pondéré par la taille de ce que porte son token (‖α f(x)‖ sur cette tête), [CLS] et " +
      "[SEP] apportent {effect} de ce que la tête apporte à {word}. L'avertissement se fonde sur cette " +
      "part : confrontée à ce que fait le puits, c'est la lecture qui voit juste quand elle avertit (",
    [" Weighed by the size of what each token carries (‖α f(x)‖ on this head), [CLS] and [SEP] bring " +
    "{effect} of what the head brings to {word}. On this model no reading was found fit to warn (its " +
    "verdict on the mean-ablation truth: {verdict}), so no row is flagged ("]:
      " Chaque poids pondéré par la taille de ce que porte son token (‖α f(x)‖ sur cette tête), [CLS] et " +
      "[SEP] apportent {effect} de ce que la tête apporte à {word}. Sur ce modèle, aucune lecture n'a été " +
      "jugée apte à avertir (son verdict sur la vérité par ablation à la moyenne : {verdict}) ; aucune ligne n'est donc " +
      "signalée (",
    "Part 10": "partie 10",
    ["{punct} of the full row went to punctuation ({marks}): counted apart from the sink, it stays in " +
    "the displayed row."]:
      "{punct} de la ligne complète va à la ponctuation ({marks}) : comptée à part du puits, elle reste " +
      "dans la ligne affichée.",
    "No punctuation in this sentence besides the word itself.":
      "Pas de ponctuation dans cette phrase, hormis le mot lui-même.",
    "Warning: ": "Avertissement : ",
    ["[CLS] and [SEP] bring more than {threshold} of what this head brings to {word}. Whatever ranking " +
    "the row shows describes the smaller part of what the head does here."]:
      "[CLS] et [SEP] apportent plus de {threshold} de ce que cette tête apporte à {word}. Quel que soit " +
      "le classement que montre la ligne, il décrit la plus petite part de ce que fait la tête ici.",
    "{word} enters the model as {tokens}.": "{word} entre dans le modèle sous la forme {tokens}.",
    ["Under {fix} this is the row of layer {layer}, every head and the residual together: {self} stays " +
    "with {word} itself, and the sink share {sink} counts that column; among the other words only, the " +
    "sink has {other}."]:
      "Sous {fix}, c'est la ligne de la couche {layer}, toutes les têtes et la connexion résiduelle " +
      "ensemble : {self} reste à {word} lui-même, et la part de puits ({sink}) inclut cette colonne ; " +
      "si l'on ne compte que les autres mots, le puits en reçoit {other}.",
    ["Ground truth (ablation, layer {layer}, head {head}): taking [CLS] and [SEP]'s part out of this " +
    "head's output moves {word}'s layer output by {sink} (1 − cos), taking the other tokens' part out " +
    "by {content}, and the whole head by {whole}: the sink carries {share} of what the head does to the " +
    "word (the row shown gives it {row}). A cosine distance grows as the square of a small change, so " +
    "this share sits further from one half than the size of the change would."]:
      "Vérité terrain (ablation, couche {layer}, tête {head}) : retirer la part de [CLS] et [SEP] de la " +
      "sortie de cette tête déplace la sortie de couche de {word} de {sink} (1 − cos), retirer la part " +
      "des autres tokens, de {content}, et la tête entière, de {whole} : le puits porte {share} de ce " +
      "que la tête fait au mot (la ligne affichée lui en attribue {row}). Une distance cosinus croît " +
      "comme le carré d'un petit changement : cette part s'écarte donc davantage de la moitié que " +
      "l'ampleur du changement ne le laisserait attendre.",
    ["Ground truth (ablation): measured on the heads the rule opens under α, ‖α v‖ and ‖α f(x)‖, not " +
    "on this one."]:
      "Vérité terrain (ablation) : mesurée sur les têtes que la règle ouvre sous α, ‖α v‖ et ‖α f(x)‖, " +
      "et non sur celle-ci.",
    "{label} (itself)": "{label} (lui-même)",
    "{label} (punctuation)": "{label} (ponctuation)",
    "not shown": "masqué",
    "Where the attention of {word} goes, column by column": "Où va l'attention de {word}, colonne par colonne",
    "To": "Vers",
    "As displayed": "Affichée",
    "In the full row": "Ligne complète",

    // -- the disclosure badge and the legend ------------------------------------------------
    ["[CLS] and [SEP]'s share of what this head brings to the word, each weight times the size of what " +
    "it carries (‖α f(x)‖ on this head): the warning reads this"]:
      "Part de [CLS] et [SEP] dans ce que cette tête apporte au mot, chaque poids multiplié par la " +
      "taille de ce qu'il porte (‖α f(x)‖ sur cette tête) : c'est sur elle que se fonde l'avertissement",
    "warning, sink effect ": "avertissement, effet du puits ",
    "sink effect ": "effet du puits ",
    ["Content mass {mass}: this row shows what is left after {sink} went to [CLS]/[SEP] and {self} to " +
    "{word} itself."]:
      "Masse de contenu {mass} : cette ligne montre ce qui reste une fois retirés les {sink} partis vers " +
      "[CLS]/[SEP] et les {self} partis vers {word} lui-même.",
    "shade: share of the displayed row (square-root scale; numbers in %)":
      "teinte : part de la ligne affichée (échelle en racine carrée ; nombres en %)",
    "[CLS], [SEP]: dropped from the display; number = % of the full row":
      "[CLS], [SEP] : hors affichage ; nombre = % de la ligne complète",
    "punctuation: kept in the display, its full-row share in Punct.":
      "ponctuation : gardée dans l'affichage, sa part de la ligne complète dans Ponct.",
    "the word itself, dropped": "le mot lui-même, hors affichage",
    "warning: the sink brings more than half of what the head brings (Effect)":
      "avertissement : le puits apporte plus de la moitié de ce qu'apporte la tête (Effet)",

    // -- instrument/worker.js, core.js, tokenizer.js: what reaches the reader's message ------
    "{path}: larger than the manifest says": "{path} : plus grand que ne l'indique le manifeste",
    "{path}: {bytes} bytes, expected {expected}": "{path} : {bytes} octets au lieu de {expected}",
    "nothing to read": "rien à lire",
    "the first word alone is longer than the model's limit":
      "le premier mot dépasse à lui seul la limite du modèle",
    "alpha holds {n} values, expected {count}": "alpha contient {n} valeurs au lieu de {count}",
    "alpha has {n} values, expected {count}": "alpha a {n} valeurs au lieu de {count}",
    "{name} has {n} values, expected {count}": "{name} a {n} valeurs au lieu de {count}",
    "unknown lens {lens}": "lentille inconnue : {lens}",
    "unknown token {token} is not in the vocabulary":
      "le token inconnu {token} n'est pas dans le vocabulaire",

    // -- a11y.js: the names of boxes that scroll sideways -----------------------------------
    "Table: {name}": "Tableau : {name}",
    "wide table": "tableau large",
    "{name} (scrolls sideways)": "{name} (défile horizontalement)",
    "Code cell {prompt}": "Cellule de code {prompt}",
    "Output of code cell {prompt}": "Sortie de la cellule de code {prompt}",

    // -- the engine's charts.js (livenumbers/static/) ---------------------------------------------------------------------------
    "Chart failed to render: {error}": "Le graphique n'a pas pu être affiché : {error}",

    // -- notebook.js: a code cell's copy button (mkdocs-jupyter's words) --------------------
    "Copy to Clipboard": "Copier dans le presse-papiers",
    "Copied!": "Copié !",
    "In [{n}]:": "Entrée [{n}]\u00a0:",
  };

  // Texts that come from the site's data (assets/instrument/index.json, written by model/:
  // the lenses' and fixes' titles, a model's title, a sentence's register), looked up by
  // data(): a text the catalogue does not know stays as it is. A key with {placeholders}
  // matches any text of its shape.
  const DATA_FR = {
    "attention weights α": "poids d'attention α",
    "each weight times the norm of the value vector": "chaque poids multiplié par la norme du vecteur de valeur",
    "each weight times the norm of the value vector after the output projection":
      "chaque poids multiplié par la norme du vecteur de valeur après la projection de sortie",
    ["Kobayashi et al. 2021: the attention block with its residual and LayerNorm, all heads (the layer " +
    "of α's head)"]:
      "Kobayashi et al. 2021 : le bloc d'attention avec sa connexion résiduelle et sa LayerNorm, toutes " +
      "les têtes (la couche de la tête d'α)",
    ["ALTI, Ferrando et al. 2022: each token's part of the attention block's output, by L1 distance (the " +
    "layer of α's head)"]:
      "ALTI, Ferrando et al. 2022 : la part de chaque token dans la sortie du bloc d'attention, par " +
      "distance L1 (la couche de la tête d'α)",
    ["value zeroing, Mohebbi et al. 2023: how far the word's layer output moves when a token's value " +
    "vectors are zeroed (the layer of α's head)"]:
      "mise à zéro des valeurs (value zeroing), Mohebbi et al. 2023 : de combien la sortie de couche du mot se déplace quand les " +
      "vecteurs de valeur d'un token sont mis à zéro (la couche de la tête d'α)",
    "{checkpoint} ({layers} layers × {heads} heads)": "{checkpoint} ({layers} couches × {heads} têtes)",
    // The corpus's registers (docs/corpus.tsv's first column; index.json's sentences), as the
    // French pages and tables name them (docs/locales/fr.yml). tests/js/i18n.test.js fails
    // when a register of the corpus has no entry here.
    "dialogue": "dialogue",
    "fiction": "fiction",
    "instructions": "instructions",
    "lists": "listes",
    "news": "actualités",
    "technical": "technique",
  };

  /** French typography, on a template: no-break spaces where French sets them. */
  function typeset(text) {
    return text
      .replace(/« /g, "«\u00a0").replace(/ »/g, "\u00a0»")
      .replace(/ :/g, "\u00a0:")
      .replace(/ ([;!?])/g, "\u202f$1")
      .replace(/([0-9}]) %/g, "$1\u202f%");
  }

  const typesetAll = (table) => Object.fromEntries(Object.entries(table).map(([k, v]) => [k, typeset(v)]));
  const CATALOGUES = { fr: typesetAll(FR) };
  const DATA = { fr: typesetAll(DATA_FR) };

  // French typography of a number (livenumbers/formats.py's _TYPOGRAPHY): a minus is U+2212
  // (Intl's French has the hyphen-minus), a power of ten "× 10" between no-break spaces,
  // raised digits. A zero has no minus ("0,00", not "−0,00": it reads as a number below zero).
  const minus = (text) => text.replace(/^-/, /[1-9]/.test(text) ? "\u2212" : "");
  const TIMES_TEN = "\u00a0×\u00a010";
  const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };

  const norm = (lang) => (/^fr/i.test(String(lang || "")) ? "fr" : "en");
  const has = (table, key) => table != null && Object.prototype.hasOwnProperty.call(table, key);

  function pageLang() {
    const html = typeof document !== "undefined" && document.documentElement;
    return norm(html && html.lang);
  }

  const PLURAL = /\{(\w+)\|((?:[^|{}]|\{\w+\})*)\|((?:[^|{}]|\{\w+\})*)\}/g;
  const SLOT = /\{(\w+)\}/g;

  /** Fill a template: "{n|one|other}" picks a form by values[n], then "{name}" takes values[name]. */
  function fill(template, values, lang) {
    if (!values) return template;
    let text = template;
    if (text.includes("|")) {
      const rules = new Intl.PluralRules(lang);
      text = text.replace(PLURAL, (m, name, one, other) =>
        (has(values, name) ? (rules.select(Number(values[name])) === "one" ? one : other) : m));
    }
    return text.replace(SLOT, (m, name) => (has(values, name) ? String(values[name]) : m));
  }

  // Data keys with {placeholders}, as patterns: "{a} ({b} layers…)" -> /^(.*) \((.*) layers…\)$/.
  const shapes = {};
  function shapeOf(key) {
    if (!shapes[key]) {
      const names = [];
      const source = key.split(SLOT).map((part, i) => {
        if (i % 2) { names.push(part); return "([^]*?)"; }
        return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      }).join("");
      shapes[key] = { re: new RegExp(`^${source}$`), names };
    }
    return shapes[key];
  }

  function make(getLang) {
    const lang = () => getLang();

    function t(english, values) {
      const l = lang(), table = CATALOGUES[l];
      return fill(has(table, english) ? table[english] : english, values, l);
    }

    // Fixed digits: English as toFixed prints them; French the same digits, in French.
    function fixed(value, digits) {
      const text = Number(value).toFixed(digits);
      if (lang() === "en" || !/^-?\d+(\.\d+)?$/.test(text)) return text;
      return minus(new Intl.NumberFormat(lang(), { minimumFractionDigits: digits, maximumFractionDigits: digits })
        .format(text));
    }

    // Scientific: English as toExponential prints it ("1.2e-5"); French as French writes it,
    // the digits English prints: "1,2 × 10⁻⁵", "10⁻⁵" alone for a mantissa of 1 with no
    // digits, the mantissa alone for 10⁰ (livenumbers/formats.py prints the same).
    function scientific(value, digits) {
      const text = Number(value).toExponential(digits);
      const m = /^(-?\d+(?:\.\d+)?)e([+-]\d+)$/.exec(text);
      if (lang() === "en" || !m) return text;
      const [, mantissa, exponent] = m;
      const power = String(Number(exponent)).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]);
      const number = fixed(Number(mantissa), digits);
      if (power === SUPERSCRIPT[0]) return number;
      return mantissa === "1" ? `10${power}` : `${number}${TIMES_TEN}${power}`;
    }

    function num(value, options) {
      const o = options || {};
      if (o.digits != null) return fixed(value, o.digits);
      if (o.exponent != null) return scientific(value, o.exponent);
      if (lang() === "en" || !Number.isFinite(Number(value))) return String(value);
      return minus(new Intl.NumberFormat(lang(), { maximumFractionDigits: 20 }).format(value));
    }

    function pct(value, digits = 1) {
      const text = fixed(value * 100, digits);
      return lang() === "en" ? `${text}%` : `${text}\u202f%`;
    }

    function data(text) {
      const table = DATA[lang()];
      if (typeof text !== "string" || !table) return text;
      if (has(table, text)) return table[text];
      for (const key of Object.keys(table)) {
        if (!key.includes("{")) continue;
        const { re, names } = shapeOf(key), m = re.exec(text);
        if (m) return fill(table[key], Object.fromEntries(names.map((n, i) => [n, m[i + 1]])), lang());
      }
      return text;
    }

    return {
      get lang() { return lang(); },
      t, num, pct, data,
    };
  }

  let forced = null; // the worker's language, from each message (it has no document)
  const api = make(() => forced || pageLang());
  api.setLang = (lang) => { forced = lang == null ? null : norm(lang); };
  api.forLang = (lang) => Object.assign(make(() => norm(lang)), { catalogue: CATALOGUES[norm(lang)] || {} });
  api.catalogue = FR;             // the French as written (tests compare placeholders)
  api.dataCatalogue = DATA_FR;
  api.typeset = typeset;
  return api;
});
