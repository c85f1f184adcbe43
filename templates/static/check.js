// "Check your answer": a reader's number against the exact count and the numbers published mistakes
// give. It computes nothing: the exercises page embeds each exercise's numbers, evaluated at build
// time (generator/site/pages/exercises.py: check_data), and the calculator hands over those of the
// config on screen (calculator.js: mistakes). Its sentences come from content/<language>/exercises.yaml.
(function () {
  "use strict";

  var UNITS = { k: 3, thousand: 3, m: 6, mn: 6, million: 6, b: 9, bn: 9, billion: 9 };

  // A figure as the counts it stands for. Written out (109,482,240) it is exact; with a unit or a
  // decimal point (109.5M, 110 million) it stands for every count that rounds to it or is cut off
  // there, as the model pages read published figures: [value − step/2, value + step).
  function parse(text) {
    var t = String(text).trim().toLowerCase().replace(/^(≈|~|about)\s*/, "").replace(/\s*parameters?$/, "");
    var own = reading();
    if (own.before) { t = t.replace(own.before, ""); }
    var m = /^(\d[\d,_\s]*)(?:\.(\d+))?\s*([a-z]*|[^\x00-\x7f]*)$/.exec(t);
    if (!m) { return null; }
    var unit = m[3], frac = m[2] || "";
    if (unit && !(unit in UNITS) && !Object.prototype.hasOwnProperty.call(own.units, unit)) { return null; }
    var exponent = unit ? (unit in UNITS ? UNITS[unit] : own.units[unit]) : 0;
    if (frac.length > exponent) { return null; }  // 3.5 parameters is not a count
    var step = 10n ** BigInt(exponent - frac.length);
    var value = BigInt(m[1].replace(/[,_\s]/g, "") + frac) * step;
    return { value: value, step: step, low: value - step / 2n, high: value + step };
  }

  // The page's own units and words for a large count, where its language reads one in myriads (formats.py
  // reading_data: 1.1 亿, 约 1.09 亿): data-reading, {units: {亿: 8, ...}, about: "（约 {reading}）"}.
  function reading() {
    var holder = document.querySelector("[data-reading]"), data = {};
    try { data = JSON.parse(holder ? holder.getAttribute("data-reading") : "{}"); } catch (e) { data = {}; }
    var around = (data.about || "").split("{reading}").map(function (w) { return w.replace(/[\s\ue000()（）]/g, ""); });
    var escaped = (around[0] || "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return { units: data.units || {}, before: escaped ? new RegExp("^" + escaped + "\\s*") : null };
  }

  function holds(figure, count) {
    count = BigInt(count);
    return figure.step === 1n ? count === figure.value : figure.low <= count && count < figure.high;
  }

  function commas(n) { return n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function fill(template, values) {
    var filled = template.replace(/\{(\w+)\}/g, function (all, name) {
      return name in values ? escapeHtml(values[name]) : all;
    });
    // A Chinese text's space beside a value (U+E000, see generator/site/soft_space.py): nothing between
    // two Han characters, across tags, and a space anywhere else.
    return filled.replace(/\ue000/g, function (all, at) {
      var before = filled.slice(0, at).replace(/(<[^>]*>|\ue000)+$/, "").slice(-1);
      var after = filled.slice(at + 1).replace(/^(<[^>]*>|\ue000)+/, "").charAt(0);
      return HAN.test(before) && HAN.test(after) ? "" : " ";
    });
  }
  var HAN = /[\u3400-\u4dbf\u4e00-\u9fff]/;

  // The verdict as HTML: data is {answer, whole, part: {value, what}, mistakes: [{value, erratum, title, printed}
  // or {value, said}]},
  // errata the address of the errata page; the answer itself is never shown.
  function verdict(strings, text, data, errata) {
    var shown = { value: text.trim() };
    if (!shown.value) { return "<p>" + fill(strings.empty, shown) + "</p>"; }
    var figure = parse(text);
    if (!figure) { return "<p>" + fill(strings.unreadable, shown) + "</p>"; }
    if (holds(figure, data.answer)) {
      if (figure.step === 1n) { return "<p>" + fill(strings.exact, { value: commas(figure.value) }) + "</p>"; }
      return "<p>" + fill(strings.rounded, { value: shown.value, precision: commas(figure.step) }) + "</p>";
    }
    if (data.whole && holds(figure, data.whole)) { return "<p>" + fill(strings.whole, shown) + "</p>"; }
    if (data.part && holds(figure, data.part.value)) {
      return "<p>" + fill(strings.part, { value: shown.value, what: data.part.what }) + "</p>";
    }
    var seen = {}, printed = [], method = [], slips = [];
    data.mistakes.forEach(function (m) {
      var key = m.said ? m.said : m.erratum + (m.printed ? " printed" : "");
      if (seen[key] || !holds(figure, m.value)) { return; }
      seen[key] = true;
      // An exercise's own slip ({value, said}) is named in words; an erratum's method links to the errata page.
      if (m.said) { slips.push("<li>" + escapeHtml(m.said) + "</li>"); return; }
      (m.printed ? printed : method).push('<li><a href="' + escapeHtml(errata + "#" + m.erratum) + '">' + escapeHtml(m.title) + "</a></li>");
    });
    var html = "";
    if (printed.length) { html += "<p>" + fill(strings.printed, shown) + "</p><ul>" + printed.join("") + "</ul>"; }
    if (method.length) { html += "<p>" + fill(strings.mistake, shown) + "</p><ul>" + method.join("") + "</ul>"; }
    if (slips.length) { html += "<p>" + fill(strings.slip, shown) + "</p><ul>" + slips.join("") + "</ul>"; }
    return html || "<p>" + fill(strings.none, shown) + "</p>";
  }

  // Every box of the exercises page: a form.check with its numbers in data-check.
  function start() {
    var holder = document.querySelector("[data-check-strings]");
    if (!holder || typeof BigInt === "undefined") { return; }
    var strings = JSON.parse(holder.getAttribute("data-check-strings"));
    var errata = holder.getAttribute("data-errata");
    Array.prototype.forEach.call(document.querySelectorAll("form.check[data-check]"), function (form) {
      var data = JSON.parse(form.getAttribute("data-check"));
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        form.querySelector("output").innerHTML = verdict(strings, form.querySelector("input").value, data, errata);
      });
    });
  }

  // A link to an answer (exercises/#answer-<id>) shows it. HTML's "ancestor details revealing algorithm" opens a
  // closed <details> around a fragment's target, which Chromium does without script; this does it elsewhere.
  function reveal() {
    var target = location.hash && document.getElementById(location.hash.slice(1));  // the ids here are ASCII
    var fold = target && target.parentElement.closest("details:not([open])");
    if (!fold) { return; }
    fold.open = true;
    target.scrollIntoView();
  }

  window.atlasCheck = { parse: parse, verdict: verdict };
  function ready() { start(); reveal(); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", ready); } else { ready(); }
  window.addEventListener("hashchange", reveal);
})();
