// Mount Pagefind's search box; a ?q= in the address starts a search (links from elsewhere).
// A tensor name is searched as its parts ("query.weight" as "query weight": Pagefind indexes
// the parts of a dotted name, not its tails), and a family page's rows whose name ends with
// what was typed come first among its sub-results, each linking to its row (#t-<name>).
window.addEventListener("DOMContentLoaded", function () {
  // Opened as a file, Pagefind's index cannot load (browsers refuse its module there) and its box
  // would say "Searching" for ever: the page says why instead, and how to serve the site.
  if (window.location.protocol === "file:") {
    document.getElementById("search-from-file").hidden = false;
    return;
  }
  if (typeof PagefindUI === "undefined") { return; }
  var typed = "";
  function pattern(text) {
    // A typed index (layer 3) stands for the placeholder a family page writes ({n}).
    var escaped = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\\.\d+(?=\\\.|$)/g, "\\.(?:\\d+|\\{[a-z]\\})");
    return new RegExp("(^|\\.)" + escaped + "$");
  }
  function rows(result) {
    if (!/[._]/.test(typed) || !/\/families\/[^/]+\/$/.test(result.url)) { return result; }
    var wanted = pattern(typed.trim());
    var words = (result.content || "").split(/\s+/);
    var found = [];
    for (var i = 0; i < words.length && found.length < 3; i++) {
      if (wanted.test(words[i]) && found.indexOf(words[i]) < 0) { found.push(words[i]); }
    }
    var rowResults = found.map(function (name) {
      var i = words.indexOf(name);
      return { title: name, url: result.url + "#t-" + encodeURI(name), excerpt: words.slice(i + 1, i + 12).join(" "), locations: [], weighted_locations: [] };
    });
    result.sub_results = rowResults.concat((result.sub_results || []).filter(function (s) { return s.url !== result.url; })).slice(0, 4);
    return result;
  }
  // A Chinese page is indexed with each run of Han characters as overlapping pieces, one starting at
  // each character ("层归一化 归一化 一化 化", search_records.py): what a result shows is joined again,
  // each piece followed by another cut to its first character.
  var pieces = /^zh\b/i.test(document.documentElement.lang);
  var overlap = /(\p{Script=Han})\p{Script=Han}*(<\/mark>)? (?=(?:<mark>)?\p{Script=Han})/gu;
  function joined(text) { return pieces && text ? text.replace(overlap, "$1$2") : text; }
  function shown(result) {
    if (result.meta) { result.meta.title = joined(result.meta.title); }
    result.excerpt = joined(result.excerpt);
    (result.sub_results || []).forEach(function (sub) { sub.title = joined(sub.title); sub.excerpt = joined(sub.excerpt); });
    return result;
  }
  // Words in a page's title are already weighted in its body (a model's record, a page's h1);
  // counted again from the title, a comparison titled "A → B" outranks both A's and B's pages.
  var ranking = { metaWeights: { title: 0 }, pageLength: 0 };
  // The models' shards of the index, merged into the site's, by absolute path (Pagefind finds a
  // bundle's site root from its path). Each shard ranks by its own word counts: a family's name is
  // rare among a shard's models and common among the site's pages, so at full weight its models
  // outrank its family page in a search for that name. At 0.75 the catalog ranks as one index did:
  // the family page first for a family's name, the model first for a model's full name (tests/browser,
  // from 0.58 to 0.88).
  var box = document.getElementById("search");
  var bundles = (box.getAttribute("data-bundles") || "").split(" ").filter(Boolean).map(function (name) {
    var path = new URL("../pagefind/" + name + "/", window.location.href).pathname;
    return { bundlePath: path, ranking: ranking, indexWeight: 0.75 };
  });
  var ui = new PagefindUI({
    element: "#search",
    showSubResults: true,
    // An excerpt is counted in words, and a Chinese page's words are its characters: 12 (the default
    // with sub-results) would show a dozen characters. 0 keeps the default.
    excerptLength: pieces ? 30 : 0,
    showImages: false,
    mergeIndex: bundles,
    ranking: ranking,
    processTerm: function (term) { typed = term; return term.replace(/[._]/g, " "); },
    processResult: function (result) { return rows(shown(result)); }
  });
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) { ui.triggerSearch(query); }
});
