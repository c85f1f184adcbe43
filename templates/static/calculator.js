// The parameter calculator. It holds no counting rule of its own: every family's blocks, formulas,
// switches, rules and the errata's published methods come from calculator/<family>.json, written at
// build time by generator/analysis/calculator.py from the same declarations the model pages are
// derived from. This script reads the form (or the address), decides the family's switches and rules
// with the small condition language of generator/counting/conditions.py, puts the numbers into the
// exported polynomials with BigInt (exact integers), and lays out the derivation. Its words come from
// content/<language>/calculator.yaml (the page hands them over in data-strings).
(function () {
  "use strict";

  var MAX_SIZE = 2147483647n;
  var SEARCH = 65536;  // how far a fix looks for the nearest whole number every rule accepts, each way
  var RUNNABLE_SEARCH = 1024;  // and past that, how far for one whose training step runs as well
  var SEVERAL_SEARCH = 2 * SEARCH;  // how many values the fixes of several problems try in all, however many keys
  var loaded = {};
  // raw: each input's text as typed; given: the keys the address named or the reader changed,
  // which the address keeps even when they equal the default (a course's link stays as written).
  // extra: the other keys the address names, as written (checked as generator count checks a card's keys).
  // last: the address of the last configuration that could be counted, whose derivation stays shown.
  var state = {
    family: null, head: null, data: null, raw: {}, given: {}, extra: {}, addressProblems: [],
    keepRatio: false, last: null, checkData: null,
    tuning: freshTuning()  // the fine-tuning method and its settings, as typed (the address's method=, rank=, ...)
  };
  var root, families, S = {}, reading = {};
  var answers = { titles: {}, printed: [], errata: "" };  // for the answer check: errata's titles and printed figures

  // --- the page's words ---------------------------------------------------------------------------

  // A sentence with {name} filled in, as plain text.
  function t(key, values) {
    var text = S[key] === undefined ? key : S[key];
    return softSpaces(text.replace(/\{(\w+)\}/g, function (all, name) {
      return values && name in values ? String(values[name]) : all;
    }));
  }

  // A sentence as HTML: its own text escaped, the values given as HTML.
  function h(key, values) {
    return softSpaces(escapeHtml(S[key] === undefined ? key : S[key]).replace(/\{(\w+)\}/g, function (all, name) {
      return values && name in values ? String(values[name]) : all;
    }));
  }

  // A Chinese text's space beside a filled-in value (U+E000, see generator/site/soft_space.py): nothing
  // between two Han characters, across tags, and a space anywhere else.
  var HAN = /[\u3400-\u4dbf\u4e00-\u9fff]/;
  function softSpaces(text) {
    if (text.indexOf("\ue000") < 0) { return text; }
    return text.replace(/\ue000/g, function (all, at) {
      var before = text.slice(0, at).replace(/(<[^>]*>|\ue000)+$/, "").slice(-1);
      var after = text.slice(at + 1).replace(/^(<[^>]*>|\ue000)+/, "").charAt(0);
      return HAN.test(before) && HAN.test(after) ? "" : " ";
    });
  }

  // --- loading a family's document -------------------------------------------------------------

  function load(name) {
    if (!loaded[name]) {
      loaded[name] = window.location.protocol === "file:" ? loadScript(name) : fetchJson(name);
    }
    return loaded[name];
  }

  function fetchJson(name) {
    return fetch(name + ".json").then(function (response) {
      if (!response.ok) { throw new Error("calculator/" + name + ".json: " + response.status); }
      return response.json();
    });
  }

  // A page opened from file:// cannot fetch; the same document is also written as a script.
  function loadScript(name) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = name + ".js";
      script.onload = function () {
        var data = window.atlasCalculatorData && window.atlasCalculatorData[name];
        if (data) { resolve(data); } else { reject(new Error("calculator/" + name + ".js held no data")); }
      };
      script.onerror = function () { reject(new Error("calculator/" + name + ".js")); };
      document.head.appendChild(script);
    });
  }

  // --- the condition language of generator/switches.py, with Python's meaning -----------------

  function isInt(v) { return typeof v === "bigint"; }
  // Whole numbers are BigInt, others (a dropout's 0.1, or 1e400: Infinity, or NaN) numbers: an ordering
  // compares either kind, as Python compares its ints and floats (and holds for no NaN).
  function isNumber(v) { return typeof v === "bigint" || typeof v === "number"; }

  function floorDiv(a, b) {
    var q = a / b;
    if (a % b !== 0n && ((a < 0n) !== (b < 0n))) { q -= 1n; }
    return q;
  }

  function floorMod(a, b) {
    var r = a % b;
    if (r !== 0n && ((r < 0n) !== (b < 0n))) { r += b; }
    return r;
  }

  function fromJson(v) {
    if (typeof v === "number" && Number.isInteger(v)) { return BigInt(v); }
    if (Array.isArray(v)) { return v.map(fromJson); }
    return v === undefined ? null : v;
  }

  // A key given as one whole number or a list of them (one per layer), as conditions._of_list.
  function ofList(op, v) {
    if (op === "length") { return Array.isArray(v) ? BigInt(v.length) : null; }
    if (isInt(v)) { return v; }
    if (!Array.isArray(v) || v.length === 0 || !v.every(isInt)) { return null; }
    return v.reduce(function (m, x) { return (op === "largest" ? x > m : x < m) ? x : m; });
  }

  function value(node, config) {
    if ("key" in node) { var found = config[node.key]; return found === undefined ? null : found; }
    if ("const" in node) { return fromJson(node.const); }
    if ("neg" in node) { var x = value(node.neg, config); return isInt(x) ? -x : null; }
    var listOp = ["largest", "smallest", "length"].filter(function (k) { return k in node; })[0];
    if (listOp) { return ofList(listOp, value(node[listOp], config)); }
    var op = Object.keys(node)[0];
    var a = value(node[op][0], config), b = value(node[op][1], config);
    if (!isInt(a) || !isInt(b)) { return null; }
    if (op === "mul") { return a * b; }
    if (op === "sub") { return a - b; }
    if (op === "min") { return a < b ? a : b; }
    if (op === "max") { return a > b ? a : b; }
    if (b === 0n) { return null; }
    return op === "div" ? floorDiv(a, b) : floorMod(a, b);
  }

  function truthy(v) {
    return !(v === null || v === undefined || v === false || v === 0n || v === "" ||
             (Array.isArray(v) && v.length === 0));
  }

  function same(a, b) {
    if (Array.isArray(a) || Array.isArray(b)) {
      return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
        a.every(function (item, i) { return same(item, b[i]); });
    }
    return a === b;
  }

  function holds(node, config) {
    if ("truthy" in node) { return truthy(config[node.truthy]); }
    if ("null" in node) { return config[node.null] === null || config[node.null] === undefined; }
    if ("not" in node) { return !holds(node.not, config); }
    if ("all" in node) { return node.all.every(function (c) { return holds(c, config); }); }
    if ("any" in node) { return node.any.some(function (c) { return holds(c, config); }); }
    if ("is" in node) {
      var v = config[node.is[0]], kind = node.is[1];
      if (kind === "int") { return isInt(v); }
      if (kind === "str") { return typeof v === "string"; }
      if (kind === "bool") { return typeof v === "boolean"; }
      if (kind === "number") { return isNumber(v) || typeof v === "boolean"; }
      return Array.isArray(v) && v.every(function (item) { return typeof item === "string"; });
    }
    if ("contains" in node) {
      var found = config[node.contains[0]], item = node.contains[1];
      if (typeof found === "string") {
        return found.toLowerCase().split("|").map(function (p) { return p.trim(); }).indexOf(item) >= 0;
      }
      return Array.isArray(found) && found.indexOf(item) >= 0;
    }
    var op = Object.keys(node)[0];
    var a = value(node[op][0], config), b = value(node[op][1], config);
    if (op === "eq" || op === "ne") { return same(a, b) === (op === "eq"); }
    if (!isNumber(a) || !isNumber(b)) { return false; }
    return { gt: a > b, ge: a >= b, lt: a < b, le: a <= b }[op];
  }

  // Python's str() and repr() of a config value, for the rules' messages.
  function pyStr(v) {
    if (v === null || v === undefined) { return "None"; }
    if (v === true) { return "True"; }
    if (v === false) { return "False"; }
    if (typeof v === "string") { return v; }
    if (Array.isArray(v)) { return "[" + v.map(pyRepr).join(", ") + "]"; }
    if (typeof v === "number" && !isFinite(v)) { return isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf"; }
    return String(v);
  }

  function pyRepr(v) {
    if (typeof v !== "string") { return pyStr(v); }
    var quote = v.indexOf("'") >= 0 && v.indexOf('"') < 0 ? '"' : "'";
    var body = v.replace(/\\/g, "\\\\");
    if (quote === "'") { body = body.replace(/'/g, "\\'"); }
    return quote + body + quote;
  }

  function message(rule, config) {
    var shown = Object.assign({}, config);
    Object.keys(rule.values).forEach(function (name) { shown[name] = value(rule.values[name], config); });
    return rule.message.replace(/\{\{|\}\}|\{(\w+)(!r)?\}/g, function (all, name, repr) {
      if (all === "{{") { return "{"; }
      if (all === "}}") { return "}"; }
      var v = shown[name] === undefined ? null : shown[name];
      return repr ? pyRepr(v) : pyStr(v);
    });
  }

  // --- polynomials and expression trees (as generator/poly.py and expr.py write them) ----------

  function evaluate(poly, values) {
    var total = 0n;
    poly.forEach(function (term) {
      var product = BigInt(term[0]);
      term[1].forEach(function (power) {
        var v = values[power[0]];
        if (v === undefined || v === null) { throw new Error(t("no-value", { symbol: power[0] })); }
        product *= v ** BigInt(power[1]);
      });
      total += product;
    });
    return total;
  }

  function commas(n) {
    var text = (n < 0n ? -n : n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return n < 0n ? "-" + text : text;
  }

  // n / d (BigInts) as the pages write a rational figure (generator/site/formats.py decimal): exact where
  // its decimals end within 12 places (11,661,692.25), else to 2 places after "≈".
  function quotient(n, d) {
    var whole = n / d, rest = n % d, digits = "";
    while (rest !== 0n && digits.length < 12) {
      rest *= 10n;
      digits += (rest / d).toString();
      rest %= d;
    }
    if (rest !== 0n) {
      var near = (Number(n) / Number(d)).toFixed(2).split(".");
      return "≈" + commas(BigInt(near[0])) + "." + near[1];
    }
    return commas(whole) + (digits ? "." + digits : "");
  }

  function rounded(n) {
    var scales = [[1000000000n, "B", 2], [1000000n, "M", 1], [1000n, "K", 1]];
    for (var i = 0; i < scales.length; i++) {
      if (n >= scales[i][0]) { return (Number(n) / Number(scales[i][0])).toFixed(scales[i][2]) + scales[i][1]; }
    }
    return n.toString();
  }

  // A total as the model pages round it: its reading in the page's language where it has one (formats.py:
  // reading; the units and words from the page's data-reading: 约 1.09 亿), else as papers print it (109.5M).
  function roundedTotal(n) {
    var units = Object.keys(reading.units || {}).map(function (u) { return [10n ** BigInt(reading.units[u]), u]; })
      .sort(function (a, b) { return a[0] < b[0] ? 1 : -1; });
    if (!units.length || n < units[units.length - 1][0]) { return '<span class="rounded">≈ ' + rounded(n) + "</span>"; }
    var digits = n.toString().length, step = digits > 3 ? 10n ** BigInt(digits - 3) : 1n;
    var near = (n + step / 2n) / step * step;
    var unit = units.filter(function (u) { return near >= u[0]; })[0];
    var said = quotient(near, unit[0]).replace(/,/g, "") + " " + unit[1];
    return '<span class="reading">' + softSpaces(escapeHtml(reading.about.replace("{reading}", said))) + "</span>";
  }

  function substitute(e, values) {
    if ("var" in e) { return { num: values[e.var] }; }
    if ("pow" in e) { return { pow: [substitute(e.pow[0], values), e.pow[1]] }; }
    if ("mul" in e) {
      var factors = e.mul.map(function (f) { return substitute(f, values); });
      if (e.sign === "×") { factors = factors.map(function (f) { return "mul" in f ? { paren: f } : f; }); }
      return { mul: factors, sign: e.sign || "·" };
    }
    if ("add" in e) { return { add: e.add.map(function (t) { return substitute(t, values); }) }; }
    if ("paren" in e) { return { paren: substitute(e.paren, values) }; }
    return e;
  }

  function big(n) { return typeof n === "bigint" ? n : BigInt(n); }

  // The positive form of a negative term (−2H for 2H), or null for a positive one.
  function negated(term) {
    if ("num" in term && big(term.num) < 0n) { return { num: -big(term.num) }; }
    if ("mul" in term && "num" in term.mul[0] && big(term.mul[0].num) < 0n) {
      var first = -big(term.mul[0].num), rest = term.mul.slice(1);
      if (first === 1n && term.sign !== "×") { return rest.length === 1 ? rest[0] : { mul: rest, sign: term.sign }; }
      return { mul: [{ num: first }].concat(rest), sign: term.sign };
    }
    return null;
  }

  var SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹";

  function toText(e) {
    if ("num" in e) { return commas(big(e.num)); }
    if ("var" in e) { return e.var; }
    if ("pow" in e) {
      return toText(e.pow[0]) + String(e.pow[1]).replace(/\d/g, function (d) { return SUPERSCRIPTS[d]; });
    }
    if ("mul" in e) { return e.mul.map(toText).join(e.sign ? " " + e.sign + " " : ""); }
    if ("add" in e) {
      return e.add.map(function (term, i) {
        var positive = negated(term);
        if (positive === null) { return (i ? " + " : "") + toText(term); }
        return (i ? " − " : "−") + toText(positive);
      }).join("");
    }
    return "(" + toText(e.paren) + ")";
  }

  // Sentences joined with English's space, spaced as the page's language writes them: no space next
  // to a full-width mark (generator/site/typography.py does the same to the pages). English is untouched.
  function tidySpacing(html) {
    return html.replace(/[ \t\r\n]+(?=[，。、；：？！（）［］【】《》〈〉「」『』〔〕])|([，。、；：？！（）［］【】《》〈〉「」『』〔〕])[ \t\r\n]+/g, "$1");
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function mathml(e) {
    if ("num" in e) {
      var n = big(e.num);
      return n >= 0n ? "<mn>" + commas(n) + "</mn>" : "<mo>−</mo><mn>" + commas(-n) + "</mn>";
    }
    if ("var" in e) { return "<mi>" + escapeHtml(e.var) + "</mi>"; }
    if ("pow" in e) { return "<msup>" + mathml(e.pow[0]) + "<mn>" + e.pow[1] + "</mn></msup>"; }
    if ("mul" in e) {
      var joiner = e.sign ? "<mo>" + e.sign + "</mo>" : "<mo>\u2062</mo>";
      return "<mrow>" + e.mul.map(mathml).join(joiner) + "</mrow>";
    }
    if ("add" in e) {
      return "<mrow>" + e.add.map(function (term, i) {
        var positive = negated(term);
        if (positive === null) { return (i ? "<mo>+</mo>" : "") + mathml(term); }
        return "<mo>−</mo>" + mathml(positive);
      }).join("") + "</mrow>";
    }
    return "<mrow><mo>(</mo>" + mathml(e.paren) + "<mo>)</mo></mrow>";
  }

  // generator/expr.py's to_tex: the TeX source each formula carries, sign for sign its MathML.
  var TEX_SIGNS = { "": "", "·": " \\cdot ", "×": " \\times ", "/": " / " };

  function texNumber(n) {
    var digits = commas(n < 0n ? -n : n).replace(/,/g, "{,}");  // an ordinary comma: no space after it
    return n < 0n ? "-" + digits : digits;
  }

  function tex(e) {
    if ("num" in e) { return texNumber(big(e.num)); }
    if ("var" in e) { return e.var.length === 1 ? e.var : "\\mathrm{" + e.var + "}"; }
    if ("pow" in e) {
      var base = tex(e.pow[0]);
      return ("var" in e.pow[0] || "paren" in e.pow[0] ? base : "{" + base + "}") + "^{" + e.pow[1] + "}";
    }
    if ("mul" in e) { return e.mul.map(tex).join(TEX_SIGNS[e.sign || ""]); }
    if ("add" in e) {
      return e.add.map(function (term, i) {
        var positive = negated(term);
        if (positive === null) { return (i ? " + " : "") + tex(term); }
        return (i ? " - " : "-") + tex(positive);
      }).join("");
    }
    return "(" + tex(e.paren) + ")";
  }

  function formula(e) {
    var shown = mathml(e);
    if ("num" in e && big(e.num) < 0n) { shown = "<mrow>" + shown + "</mrow>"; }  // <semantics> shows one element
    var source = '<annotation encoding="application/x-tex">' + escapeHtml(tex(e)) + "</annotation>";
    return '<span class="math"><math alttext="' + escapeHtml(toText(e)) + '"><semantics>' + shown + source +
      "</semantics></math></span>";
  }

  // generator/expr.py's poly_expr: terms by degree, then by the family's symbol order.
  function monomialKey(mono, order) {
    var powers = {};
    var degree = 0;
    mono.forEach(function (p) { powers[p[0]] = p[1]; degree += p[1]; });
    return [-degree].concat(order.map(function (s) { return -(powers[s] || 0); }));
  }

  function compareKeys(a, b) {
    for (var i = 0; i < a.length; i++) { if (a[i] !== b[i]) { return a[i] - b[i]; } }
    return 0;
  }

  function monomialExpr(mono, coeff, order) {
    var ranked = mono.slice().sort(function (a, b) {
      var ia = order.indexOf(a[0]), ib = order.indexOf(b[0]);
      return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib);
    });
    var factors = ranked.map(function (p) { return p[1] === 1 ? { var: p[0] } : { pow: [{ var: p[0] }, p[1]] }; });
    if (coeff === -1n && factors.length) { factors.unshift({ num: -1n }); }
    else if (coeff !== 1n || !factors.length) { factors.unshift({ num: coeff }); }
    return factors.length === 1 ? factors[0] : { mul: factors, sign: "" };
  }

  function polyExpr(terms, order) {
    var sorted = terms.slice().sort(function (a, b) {
      return compareKeys(monomialKey(a[1], order), monomialKey(b[1], order));
    });
    var exprs = sorted.map(function (t) { return monomialExpr(t[1], t[0], order); });
    if (!exprs.length) { return { num: 0n }; }
    return exprs.length === 1 ? exprs[0] : { add: exprs };
  }

  // generator/derivation.py's closed_form: L(...) per repeated block, a grouped block as it is,
  // the other blocks' polynomials merged into one sum.
  function closedForm(blocks, order) {
    var groups = [];
    var rest = {};
    blocks.forEach(function (block) {
      if (block.subtotal_expression) { groups.push(block.subtotal_expression); return; }
      if (block.grouped) { groups.push(block.grouped); return; }
      block.formula.forEach(function (term) {
        var key = JSON.stringify(term[1]);
        rest[key] = rest[key] || [0n, term[1]];
        rest[key][0] += BigInt(term[0]);
      });
    });
    var terms = Object.keys(rest).map(function (k) { return rest[k]; }).filter(function (t) { return t[0] !== 0n; });
    if (terms.length) {
      var tail = polyExpr(terms, order);
      if ("add" in tail) { groups = groups.concat(tail.add); } else { groups.push(tail); }
    }
    return groups.length === 1 ? groups[0] : { add: groups };
  }

  // --- reading values: the form's text, the address ---------------------------------------------

  // The canonical text of a parsed value, as the address writes it (generator/analysis/calculator.encode).
  function encode(kind, v) {
    if (kind === "json" || kind === "flag" || v === null) { return jsonText(v); }
    return String(v);
  }

  // JSON has no word for NaN and the infinities, which JSON.stringify writes as null: they are written as
  // Python's json writes them, and as parse reads them back.
  function jsonText(v) {
    if (typeof v === "number" && !isFinite(v)) { return isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity"; }
    return JSON.stringify(v, function (k, x) { return typeof x === "bigint" ? Number(x) : x; });
  }

  // A key left empty is left out; where the family refuses a null written down, "null" is that null.
  function defaultText(input) {
    var v = fromJson(input.default);
    if (v === null) { return input.kind === "json" && !nullRefused(input.key) ? "null" : ""; }
    return input.kind === "json" ? jsonText(v) : String(v);
  }

  // {value} or {error}; the same rules as the card check for sizes, whole numbers and flags.
  function parse(input, text) {
    var trimmed = text.trim();
    var what = input.symbol ? input.meaning + ", " + input.symbol : input.meaning;
    if (input.kind === "flag") {
      if (trimmed === "true" || trimmed === "false") { return { value: trimmed === "true" }; }
      return { error: t("flag-expected", { found: JSON.stringify(text) }) };
    }
    if (input.kind === "text") { return { value: text }; }
    if (input.kind === "json") {
      if (trimmed === "") { return { value: null }; }
      // The numbers JSON has no word for, as Python's json writes and reads them (a page's link writes NaN).
      if (trimmed === "NaN" || trimmed === "Infinity" || trimmed === "-Infinity") { return { value: Number(trimmed) }; }
      try { return { value: fromJson(JSON.parse(trimmed)) }; } catch (e) {
        if (/^[\[{"]/.test(trimmed)) { return { error: t("json-expected", { error: e.message }) }; }
        return { value: text };
      }
    }
    if (trimmed === "" || trimmed === "null") {
      if (input.optional) { return { value: null }; }
      return { error: t("whole-missing", { what: what }) };
    }
    var digits = trimmed.replace(/[,_\s]/g, "");
    if (!/^-?\d+$/.test(digits)) { return { error: t("whole-expected", { what: what, found: JSON.stringify(text) }) }; }
    var n = BigInt(digits);
    if (input.kind === "size" && (n < BigInt(input.minimum) || n > MAX_SIZE)) {
      return { error: t("whole-range", { minimum: input.minimum, maximum: commas(MAX_SIZE), what: what, found: commas(n) }) };
    }
    return { value: n };
  }

  // The value as the config class checks it (generator/cards/types.py): {value} or {error}.
  function typed(input, parsed, text) {
    if (parsed.error || !input.type || matches(parsed.value, input.type)) { return parsed; }
    return { error: t("type-expected", { type: typeText(input.type), found: JSON.stringify(text.trim()) }) };
  }

  // Whole numbers are BigInt here and other numbers are numbers (fromJson): a value written 1.0
  // reads as 1, so "float" alone cannot be told from "int"; the export refuses such an input.
  function matches(v, kind) {
    if (kind === "any") { return true; }
    if (kind === "none") { return v === null; }
    if (kind === "int") { return typeof v === "bigint"; }
    if (kind === "float") { return typeof v === "number"; }
    if (kind === "str") { return typeof v === "string"; }
    if (kind === "bool") { return typeof v === "boolean"; }
    if (kind === "list") { return Array.isArray(v); }
    if (kind === "dict") { return v !== null && typeof v === "object" && !Array.isArray(v); }
    if (kind.union) { return kind.union.some(function (k) { return matches(v, k); }); }
    if (kind.literal) { return kind.literal.some(function (x) { return fromJson(x) === v; }); }
    if (kind.list) { return Array.isArray(v) && v.every(function (x) { return matches(x, kind.list); }); }
    return matches(v, "dict") && Object.keys(v).every(function (k) { return matches(k, kind.dict[0]) && matches(v[k], kind.dict[1]); });
  }

  // A type as Python writes it: float | int | None, list[str], Literal['cls', 'mean'].
  function typeText(kind) {
    if (typeof kind === "string") { return kind === "none" ? "None" : kind === "any" ? "Any" : kind; }
    if (kind.union) { return kind.union.map(typeText).join(" | "); }
    if (kind.literal) {
      return "Literal[" + kind.literal.map(function (x) { return typeof x === "string" ? "'" + x + "'" : String(x); }).join(", ") + "]";
    }
    if (kind.list) { return "list[" + typeText(kind.list) + "]"; }
    return "dict[" + typeText(kind.dict[0]) + ", " + typeText(kind.dict[1]) + "]";
  }

  function inputOf(key) {
    return state.data.inputs.filter(function (i) { return i.key === key; })[0] || null;
  }

  // --- the address's other keys, checked as generator/cards/config.py: resolve_config checks a card's ---

  function nullRefused(key) { return state.data.config.null_refused.indexOf(key) >= 0; }

  // The address names any key, "__proto__" or "constructor" too: they are looked up as a mapping's own
  // keys only, and kept in objects without a prototype.
  function own(object, key) { return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined; }

  function keyed(object) { return Object.assign(Object.create(null), object); }

  // A value the address gives a key that is no input, as Python's json reads it (1.0 stays a float, which a
  // key declared float takes, where 1 does not), else as text; left empty, null, as an empty field is.
  function extraValue(text) {
    var trimmed = text.trim();
    if (trimmed === "") { return null; }
    if (trimmed === "NaN" || trimmed === "Infinity" || trimmed === "-Infinity") { return Number(trimmed); }
    try {
      return JSON.parse(trimmed, function (k, v, context) {
        if (typeof v !== "number") { return v; }
        var source = context && context.source;  // the number as written, where the browser says it
        if (source === undefined) { return Number.isInteger(v) ? BigInt(v) : v; }
        return /^-?\d+$/.test(source) ? BigInt(source) : v;
      });
    } catch (e) { return text; }
  }

  // A value as the key's own input reads it, or as extraValue does: two texts of the same value agree.
  function canonical(key, text) {
    var input = inputOf(key);
    if (!input) { return jsonText(extraValue(text)); }
    var parsed = parse(input, text);
    return parsed.error ? text.trim() : encode(input.kind, parsed.value);
  }

  // The address's keys that are no input: one the config class takes under another name (hidden_size
  // for dim, an alias) is read under its own, with a note, as count reads it; one that disagrees with
  // its key, given too, stays (extraProblems refuses it). The others stay as written.
  function readAliases(extra) {
    var aliases = state.data.config.aliases, kept = keyed({});
    Object.keys(extra).forEach(function (key) {
      var target = own(aliases, key), text = extra[key];
      if (target === undefined) { kept[key] = text; return; }
      var input = inputOf(target);
      var theirs = input ? (state.given[target] ? state.raw[target] : undefined) : extra[target];
      if (theirs !== undefined && canonical(target, theirs) !== canonical(target, text)) { kept[key] = text; return; }
      state.addressProblems.push(t("alias-read", { key: key, target: target }));
      if (input) { state.raw[target] = text; state.given[target] = true; } else { kept[target] = text; }
    });
    return readLabels(kept);
  }

  // id2label, where num_labels is not given, is how many labels there are (PretrainedConfig counts them, and
  // count does): it is read as num_labels, with a note. One that disagrees with num_labels, or is no
  // mapping, stays (extraProblems refuses it).
  function readLabels(extra) {
    var labels = labelCount(extra);
    if (labels === null || state.given.num_labels) { return extra; }
    state.raw.num_labels = labels.toString();
    state.given.num_labels = true;
    state.addressProblems.push(t("labels-read", { labels: labels }));
    var kept = keyed(extra);
    delete kept.id2label;
    return kept;
  }

  // How many labels the address's id2label names; null when it names none, or its value is no mapping.
  function labelCount(extra) {
    var text = own(extra, "id2label");
    if (text === undefined || !inputOf("num_labels")) { return null; }
    var labels = extraValue(text);
    return matches(labels, "dict") ? BigInt(Object.keys(labels).length) : null;
  }

  // The problems of the address's other keys, as resolve_config finds them: an unknown key (with count's
  // near miss: static/close-match.js), an alias that disagrees with its key, a value of another type than
  // the class declares, which, as in the card check, stops the rules from running.
  function extraProblems(extra, raw) {
    var c = state.data.config, problems = [];
    Object.keys(extra).forEach(function (key) {
      var text = extra[key], target = own(c.aliases, key), type = own(c.types, key), problem = { key: key, id: "key:" + key };
      if (target !== undefined) {
        var other = inputOf(target) ? raw[target] : extra[target];
        problem.text = t("alias-conflict", { key: key, value: text, target: target, other: other });
      } else if (c.keys.indexOf(key) < 0) {
        problem.near = window.atlasCloseMatch ? window.atlasCloseMatch(key, c.keys) : null;
        var suggestion = problem.near === null ? "" : t("did-you-mean", { key: problem.near });
        problem.text = t("unknown-key", { config_class: c.class, version: c.version, suggestion: suggestion });
      } else if (key === "id2label" && inputOf("num_labels") && extraValue(text) !== null) {
        var labels = labelCount(extra), given = canonical("num_labels", raw.num_labels);
        if (labels !== null && given === labels.toString()) { return; }
        if (labels === null) { problem.text = t("labels-expected", { found: JSON.stringify(text.trim()) }); }
        else {
          problem.key = "num_labels";  // count names num_labels, which the form can change
          problem.text = t("labels-disagree", { num_labels: given, labels: labels });
        }
      } else if (type !== undefined && !matches(extraValue(text), type)) {
        problem.text = t("type-expected", { type: typeText(type), found: JSON.stringify(text.trim()) });
        problem.gate = true;
      } else { return; }
      problem.text = problem.key + ": " + problem.text;
      problems.push(problem);
    });
    return problems;
  }

  // The notes on the address's keys that are known and checked, but change no count.
  function extraNotes(problems) {
    var title = familyEntry(state.family).title;
    return Object.keys(state.extra).filter(function (key) {
      return !problems.some(function (p) { return p.id === "key:" + key; });
    }).map(function (key) { return t("not-counted", { key: key, title: title }); });
  }

  // --- counting: the one place the family's rules and formulas are applied ----------------------

  // Every input parsed: {config, problems}. A problem stops the rules from running (gate), as in the card check.
  function parseAll(raw) {
    var config = {}, problems = [];
    state.data.inputs.forEach(function (input) {
      var parsed = typed(input, parse(input, raw[input.key]), raw[input.key]);
      if (!parsed.error && parsed.value === null && nullRefused(input.key) && raw[input.key].trim() !== "") {
        parsed = { error: state.data.config.null_refused_message };
      }
      if (parsed.error) {
        problems.push({ key: input.key, id: "input:" + input.key, gate: true, text: input.key + ": " + parsed.error });
      } else { config[input.key] = parsed.value; }
    });
    return { config: config, problems: problems };
  }

  // The rules transformers enforces that refuse this config for this head: [{rule, group, text}], one per
  // check (group: the check's index).
  function refusals(config, head) {
    var checked = Object.assign({}, config, { "@head": head });  // a rule may hold for some heads only
    var failed = [];
    checks().forEach(function (rules, group) {
      for (var i = 0; i < rules.length; i++) {
        if (holds(rules[i].fails, checked)) { failed.push({ rule: rules[i], group: group, text: message(rules[i], checked) }); break; }
      }
    });
    return failed;
  }

  // Every problem of the form's values and the address's other keys: the rules run only when no value
  // stops them (a value of the wrong type), as in the card check. Each problem has an id that stays
  // the same while its value changes (a rule's is its check's index), for the fixes of one problem each.
  function verdict(raw, extra) {
    var parsed = parseAll(raw);
    var problems = parsed.problems.concat(extraProblems(extra, raw)), failed = [];
    if (!problems.some(function (p) { return p.gate; })) {
      failed = refusals(parsed.config, state.head);
      problems = problems.concat(failed.map(function (f) {
        return { key: f.rule.keys[0], id: "rule:" + f.group, text: f.rule.keys[0] + ": " + f.text };
      }));
    }
    return { config: parsed.config, problems: problems, failed: failed };
  }

  // The family's rules, and where it has a measured training step, that s fits the position table
  // (generator count --seq refuses the same): the exported condition, with this page's words.
  // Whether any rule refuses the config, without writing the messages: a fix's search asks this
  // tens of thousands of times. With ``allowed`` (check indexes), whether only those refuse it.
  function refused(config, head, allowed) {
    var checked = Object.assign({}, config, { "@head": head });
    return checks().some(function (rules, group) {
      return !(allowed && allowed[group]) && rules.some(function (rule) { return holds(rule.fails, checked); });
    });
  }

  // Made once per family: a fix's search asks for them tens of thousands of times.
  function checks() {
    var data = state.data, c = data.compute;
    if (!data.allChecks) {
      var too = c.seq_too_long;
      var words = S[too.message] || S["seq-too-long"];
      var rule = { fails: too.fails, keys: too.keys, values: too.values, message: words };
      data.allChecks = c.measured ? data.checks.concat([[rule]]) : data.checks;
    }
    return data.allChecks;
  }

  // The config counted for one head: its blocks, each step's count, the total. Throws when a symbol has no value.
  function count(config, head) {
    var data = state.data;
    var on = {};
    data.switches.forEach(function (s) { on[s.name] = holds(s.when, config); });
    var values = {};
    data.symbols.forEach(function (s) {
      var v = s.value ? value(s.value, config) : config[s.key];
      if (isInt(v)) { values[s.name] = v; }
    });
    var blocks = [], computes = [];
    data.heads[head].slots.forEach(function (slot) {
      var bits = slot.switches.map(function (name) { return on[name] ? "1" : "0"; }).join("");
      var index = slot.variants[bits];
      if (index !== null && index !== undefined) {
        blocks.push(data.blocks[index]);
        computes.push(data.compute.blocks[slot.compute[bits]]);
      }
    });
    var total = 0n;
    var derived = blocks.map(function (block, i) {
      var steps = block.steps.map(function (step) { return evaluate(step.formula, values); });
      var one = steps.reduce(function (a, b) { return a + b; }, 0n);
      var copies = evaluate(block.copies, values);
      total += one * copies;
      return { block: block, compute: computes[i], steps: steps, value: one, copies: copies, subtotal: one * copies };
    });
    return { config: config, values: values, on: on, className: data.heads[head].class_name, blocks: derived, total: total };
  }

  // Whether a training step of the config runs, as far as its rules tell without counting it: no rule of
  // the step's refusals holds, and every activation the step reads has declared saved tensors. A fix
  // prefers such a value, so that the page it leads to shows the step too.
  function stepRuns(config) {
    var c = state.data.compute;
    if (!c.measured) { return true; }
    if (stepRefusal(config) !== null || stepInexact(config) !== null) { return false; }
    return activationKeys().every(function (key) {
      var name = config[key];
      return name === undefined || name === null || Boolean(c.activations[name]);
    });
  }

  // Why transformers builds the config but cannot train it (generator/counting/compute.py: step_refusal),
  // or null: the first of the family's rules for it that holds, in its words.
  function stepRefusal(config) {
    var checked = Object.assign({}, config, { "@head": state.head });
    var rule = state.data.compute.cannot_run.filter(function (r) { return holds(r.fails, checked); })[0];
    return rule ? message(rule, checked) : null;
  }

  // Why no polynomial says this config's step (generator/counting/compute.py: step_inexact), or null.
  function stepInexact(config) {
    var checked = Object.assign({}, config, { "@head": state.head });
    var rule = state.data.compute.not_exact.filter(function (r) { return holds(r.fails, checked); })[0];
    return rule ? message(rule, checked) : null;
  }

  // The config keys that name an activation function in any of the family's compute blocks (made once).
  function activationKeys() {
    var data = state.data;
    if (!data.activationKeys) {
      var keys = {};
      data.compute.blocks.forEach(function (block) {
        block.steps.forEach(function (step) { if (step.activation) { keys[step.activation] = true; } });
      });
      data.activationKeys = Object.keys(keys);
    }
    return data.activationKeys;
  }

  // True when the config passes every rule for the head and holds parameters: what a fix must reach.
  function countable(config, head) {
    if (refused(config, head)) { return false; }
    try { return count(config, head).total > 0n; } catch (e) { return false; }
  }

  function evaluateAll() {
    var found = verdict(state.raw, state.extra);
    if (found.problems.length) {
      var fixes = fixesFor(found);
      return { problems: found.problems, fixes: fixes.fixes, partial: fixes.partial, together: fixes.together };
    }
    var result;
    try { result = count(found.config, state.head); } catch (error) {
      return { problems: [{ key: null, text: error.message }], fixes: [] };
    }
    if (result.total === 0n) { return { problems: [{ key: null, text: state.data.no_parameters }], fixes: [] }; }
    if (state.data.compute.measured) {
      try { result.compute = trainingStep(result, found.config); } catch (error) { result.computeProblem = error.message; }
    }
    result.tuning = evaluateTuning(result, found.config);
    if (state.data.compute.measured && result.tuning.record && result.tuning.method !== "full") {
      result.methodStep = methodStep(result, found.config, result.tuning);
    }
    return result;
  }

  // --- a training step: FLOPs, saved activations, training memory (generator/counting/compute.py) --

  // The sequence length asked for, or, when the field is left empty, 512 or the longest the model takes
  // where that is shorter (P, less the positions before the first token: 514 rows may hold 512).
  function sequenceLength(config) {
    var c = state.data.compute, longest = value(c.longest, config);
    if (isInt(config.seq)) { return config.seq; }
    var fallback = BigInt(c.default_seq);
    return isInt(longest) && longest < fallback ? (longest > 0n ? longest : 0n) : fallback;
  }

  // What a step keeps: an activation function its input, its output or both (and what a Python
  // function keeps besides), as compute.ACTIVATIONS says for the function the config names.
  function keptBy(step, config) {
    if (step.activation === null && step.function === null) { return step.saved; }
    var name = step.function || config[step.activation];
    var keeps = state.data.compute.activations[name];
    if (!keeps) {
      throw new Error(t("activation-unknown", { key: step.activation || step.function, found: JSON.stringify(name),
        declared: Object.keys(state.data.compute.activations).sort().join(", ") }));
    }
    var kept = (keeps.input ? [step.saved[0]] : []).concat(keeps.output ? [step.saved[1]] : []);
    for (var n = 0; n < keeps.intermediates; n++) { kept.push({ key: step.path + " intermediate " + n, shape: step.saved[0].shape }); }
    return kept;
  }

  // Every symbol's number at this batch size and sequence length: the config's, b, s and the step symbols'
  // (Compute.values_at). A step symbol (a padded length) reads the step's b and s as the keys batch and seq.
  function stepValues(result, config, b, s) {
    var values = Object.assign({}, result.values), stepConfig = Object.assign({}, config, { batch: b, seq: s });
    state.data.compute.symbols.forEach(function (x) { var v = value(x.value, stepConfig); if (isInt(v)) { values[x.name] = v; } });
    values.b = b;
    values.s = s;
    return values;
  }

  function elements(shape, values) {
    return shape.reduce(function (n, d) { return n * evaluate(d, values); }, 1n);
  }

  // The figures of count_compute(card).at(b, s), from the exported declarations alone: each product's
  // FLOPs (and its backward's, unless the head's backward skips the block), each storage autograd keeps
  // counted once per block (shared ones once per model), b = 1's extra views, Adam's bytes per parameter.
  function trainingStep(result, config) {
    var c = state.data.compute;
    var refusal = stepRefusal(config);  // a config transformers builds but cannot train
    if (refusal !== null) { throw new Error(t("step-cannot-run", { reason: refusal })); }
    var inexact = stepInexact(config);  // a step torch runs whose figures no polynomial says
    if (inexact !== null) { throw new Error(t("step-not-exact", { reason: inexact })); }
    var b = config.batch, s = sequenceLength(config), values = stepValues(result, config, b, s);
    var out = { batch: b, seq: s, forward: 0n, backward: 0n, fp32: 0n, bf16: 0n, frozen: 0n };
    var shared = {};
    result.blocks.forEach(function (item) {
      var runs = evaluate(item.compute.runs, values);
      var backward = c.not_differentiated[state.head].indexOf(item.block.kind) < 0;
      var local = {};
      item.block.steps.forEach(function (step) {
        var each = step.copies ? evaluate(step.copies, values) : 1n;
        step.tensors.forEach(function (x) { if (x.frozen) { out.frozen += elements(x.shape, values) * each * item.copies; } });
      });
      item.compute.steps.forEach(function (step) {
        step.products.forEach(function (p) {
          if (p.when && !holds(p.when, config)) { return; }
          var flops = evaluate(p.flops, values) * runs;
          if (!p.backward_only) { out.forward += flops; }
          if (backward) { out.backward += flops * BigInt(p.backward); }
        });
        keptBy(step, config).forEach(function (x) {
          if (x.when && !holds(x.when, config)) { return; }
          var scope = x.shared ? shared : local;
          if (scope[x.key]) { return; }
          scope[x.key] = true;
          if (x.batch_one && (b !== 1n || x.shared)) { return; }
          if (x.seq_above_one && s === 1n) { return; }
          if (x.batch_above_one && b === 1n) { return; }
          var n = elements(x.shape, values);
          ["fp32", "bf16"].forEach(function (p) {
            var size = n * BigInt(c.element_bytes[x.dtype || "activation"][p]);
            out[p] += x.shared ? size : size * runs;
          });
        });
      });
    });
    var trainable = result.total - out.frozen, per = c.per_parameter;
    out.memory = {};
    [["fp32", "fp32"], ["bf16_mixed", "bf16"]].forEach(function (m) {
      out.memory[m[0]] = BigInt(per.trainable[m[0]]) * trainable + BigInt(per.frozen[m[0]]) * out.frozen + out[m[1]];
    });
    return out;
  }

  // The step under a method (static/calculator-step.js works it out), as count --method --json gives it:
  // prompt tuning runs s + n positions, and with s left empty takes the longest s that leaves room for n.
  // Its figures, or why there are none, in the page's words (count refuses such a prompt before anything else).
  function methodStep(result, config, found) {
    var tuning = readTuning(state.tuning).tuning, c = state.data.compute;
    var b = config.batch, s = sequenceLength(config), n = tuning.method === "prompt-tuning" ? tuning.virtual_tokens : 0n;
    var longest = value(c.longest, config);
    if (n > 0n && isInt(longest) && s + n > longest) {
      var fits = longest - n;  // the virtual tokens take positions too
      if (isInt(config.seq) || fits < 1n) {
        return { refusal: t("method-prompt-too-long", { most: commas(fits > 0n ? fits : 0n), n: commas(n), longest: commas(longest), found: commas(s) }) };
      }
      s = fits;
    }
    if (!result.compute) { return null; }  // no step at all: the full step's reason stands (renderCompute)
    var values = stepValues(result, config, b, s + n), step = window.atlasStep;
    var evaluateAt = function (poly) { return evaluate(poly, values); };
    try {
      var ctx = {
        blocks: result.blocks.map(function (item) { return step.block(item.block, item.compute, evaluateAt(item.compute.runs), window.atlasMethods.indexless); }),
        trained: step.trainedOf(found.model, found.record, tuning, state.data.tuning),
        flow: c.flow, method: tuning.method, head: state.head, batch: b, seq: s + n, elementBytes: c.element_bytes, evaluate: evaluateAt,
        holds: function (when) { return holds(when, config); },
        savedOf: function (item) { return keptBy(item, config); },
        differentiated: function (kind) { return c.not_differentiated[state.head].indexOf(kind) < 0; }
      };
      var out = step.tunedStep(ctx);
    } catch (error) {
      if (!(error instanceof step.StepError)) { throw error; }
      return { note: noStepWords(error) };
    }
    out.batch = b;
    out.seq = s;
    out.positions = s + n;
    out.memory = {};
    [["fp32", "fp32"], ["bf16_mixed", "bf16"]].forEach(function (m) { out.memory[m[0]] = found.record.parameter_memory[m[0]] + out[m[1]]; });
    return out;
  }

  // Why a method's step has no figures, in the words count gives (generator count's _method_step) as a sentence.
  function noStepWords(error) {
    if (error.kind === "loss-unreached") { return t("step-cannot-run", { reason: t("method-loss-unreached") }); }
    var reason = error.kind === "views-at-one" ? t("method-views-at-one") : t("method-step-not-derived", { detail: words(error.key, error.values) });
    return t("method-step-none", { reason: reason });
  }

  // A sentence whose values may be lists of names: each list joined with the edition's mark.
  function words(key, values) {
    var shown = {};
    Object.keys(values).forEach(function (name) {
      shown[name] = Array.isArray(values[name]) ? values[name].join(t("list-separator")) : values[name];
    });
    return t(key, shown);
  }

  // --- fine-tuning methods (static/calculator-methods.js decides; here the form, the address and the words) ---

  // The address's keys for a method and its settings, and the settings each method reads (generator count's).
  var TUNING_KEYS = ["method", "rank", "targets", "feedforward", "tokens"];
  var TUNING_READS = { lora: ["rank", "targets"], ia3: ["targets", "feedforward"], "prompt-tuning": ["tokens"] };
  var TUNING_FIELD = { method: "method", rank: "rank", targets: "targets", feedforward: "feedforward", virtual_tokens: "tokens" };

  function tuningId(key) { return "calc-tuning-" + key; }

  function freshTuning() { return { method: "full", rank: "", targets: "", feedforward: "", tokens: "" }; }

  // The settings as the engine takes them, or a problem with one of them ({field, text}).
  function readTuning(raw) {
    var rules = state.data.tuning, tuning = { method: raw.method, targets: null, feedforward: null };
    if (rules.methods.indexOf(raw.method) < 0) {
      return { problem: { field: "method", text: t("method-unknown", { methods: rules.methods.join(t("list-separator")), found: pyRepr(raw.method) }) } };
    }
    var numbers = [["rank", "rank", rules.defaults.rank], ["tokens", "virtual_tokens", rules.defaults.virtual_tokens]];
    for (var i = 0; i < numbers.length; i++) {
      var text = raw[numbers[i][0]].trim();
      if (text !== "" && !/^\d+$/.test(text)) {
        return { problem: { field: numbers[i][0], text: t("positive-expected", { found: pyRepr(raw[numbers[i][0]]) }) } };
      }
      tuning[numbers[i][1]] = BigInt(text === "" ? numbers[i][2] : text);
    }
    var lists = ["targets", "feedforward"];
    for (var j = 0; j < lists.length; j++) {
      if (raw[lists[j]].trim() === "") { continue; }
      var names = raw[lists[j]].split(",").map(function (n) { return n.trim(); });
      if (names.some(function (n) { return n === ""; })) {
        return { problem: { field: lists[j], text: t("names-expected", { found: pyRepr(raw[lists[j]]) }) } };
      }
      tuning[lists[j]] = names;
    }
    return { tuning: tuning };
  }

  // Every index of a block, as Block.instances: the first repeat from the block's start, the last varying fastest.
  function instances(block, values) {
    var found = [[]];
    block.repeat.forEach(function (symbol, i) {
      var next = [];
      found.forEach(function (index) {
        for (var n = i === 0 ? BigInt(block.start) : 0n; n < values[symbol]; n++) { next.push(index.concat([n])); }
      });
      found = next;
    });
    return found;
  }

  // The model the methods walk: every tensor as named_parameters() names it, with its Layer, then the
  // blocks' modules without tensors (a compute block's steps past its tensor steps are its ops).
  function tuningModel(result, config) {
    var entries = [], ops = [], values = result.values;
    result.blocks.forEach(function (item) {
      var block = item.block;
      instances(block, values).forEach(function (index) {
        var prefix = block.prefix.replace(/\{(\d+)\}/g, function (_, i) { return String(index[Number(i)]); });
        block.steps.forEach(function (step) {
          var copies = step.copies ? evaluate(step.copies, values) : 1n;
          for (var n = 0n; n < copies; n++) {
            step.tensors.forEach(function (x) {
              var name = prefix + x.name.replace(/\{n\}/g, String(n));
              if (x.tied_to) { entries.push({ name: name, layer: x.layer, tied_to: x.tied_to }); return; }
              var shape = x.shape.map(function (d) { return evaluate(d, values); });
              entries.push({ name: name, layer: x.layer, shape: shape, count: elements(x.shape, values), frozen: Boolean(x.frozen) });
            });
          }
        });
        item.compute.steps.slice(block.steps.length).forEach(function (op) { ops.push(prefix + op.path); });
      });
    });
    return { family: state.family, head: state.head, className: result.className, config: config, entries: entries, ops: ops, total: result.total };
  }

  // The chosen method on the counted config: its record, or the refusal in words beside its field.
  function evaluateTuning(result, config) {
    var read = readTuning(state.tuning);
    if (read.problem) { return { problem: read.problem }; }
    try {
      var model = tuningModel(result, config);  // kept: the step under the method reads it too
      return { record: window.atlasMethods.tune(model, state.data.tuning, read.tuning), method: read.tuning.method, model: model };
    } catch (error) {
      if (!(error instanceof window.atlasMethods.Refusal)) { throw error; }
      return { problem: { field: TUNING_FIELD[error.what], text: refusalText(error) } };
    }
  }

  function refusalText(refusal) {
    var values = Object.assign({}, refusal.values);
    if (values.kinds) {
      var kinds = values.kinds;
      values.kinds = kinds.length > 1 ? kinds.slice(0, -1).join(t("list-separator")) + t("or") + kinds[kinds.length - 1] : kinds[0];
    }
    return words(refusal.key, values);
  }

  function tuningQuery() {
    var raw = state.tuning;
    if (raw.method === "full") { return ""; }
    var parts = ["method=" + queryValue(raw.method)];
    (TUNING_READS[raw.method] || []).forEach(function (key) {
      if (raw[key].trim() !== "") { parts.push(key + "=" + queryValue(raw[key].trim())); }
    });
    return "&" + parts.join("&");
  }

  function buildTuning() {
    var rules = state.data.tuning;
    var set = el("fieldset", { class: "calc-group calc-tuning-fields", id: "calc-tuning-fields" });
    set.appendChild(el("legend", {}, h("tuning")));
    set.appendChild(el("p", { class: "calc-hint" }, h("tuning-hint")));
    var select = el("select", { id: tuningId("method"), name: "method", "aria-describedby": tuningId("method") + "-error" });
    rules.methods.forEach(function (m) { select.appendChild(el("option", { value: m }, h("method-" + m))); });
    var box = wrapField(el("label", { for: tuningId("method") }, h("method")), select);
    box.appendChild(el("span", { class: "calc-error", id: tuningId("method") + "-error" }));
    set.appendChild(box);
    select.addEventListener("change", function () { state.tuning.method = select.value; update(); });
    var defaults = {
      rank: rules.defaults.rank, tokens: rules.defaults.virtual_tokens,
      targets: rules.peft.lora, feedforward: rules.peft.feedforward
    };
    ["rank", "targets", "feedforward", "tokens"].forEach(function (key) {
      var id = tuningId(key);
      var control = el("input", { type: "text", id: id, name: key, spellcheck: "false", autocomplete: "off",
        inputmode: key === "rank" || key === "tokens" ? "numeric" : null, "aria-describedby": id + "-meaning " + id + "-error" });
      var field = wrapField(el("label", { for: id }, h("tuning-" + key)), control);
      field.id = id + "-field";
      field.appendChild(el("span", { class: "calc-meaning", id: id + "-meaning" }, tuningHint(key, defaults[key])));
      field.appendChild(el("span", { class: "calc-error", id: id + "-error" }));
      control.addEventListener("input", function () { state.tuning[key] = control.value; update(); });
      set.appendChild(field);
    });
    return set;
  }

  // A setting's meaning, with what an empty field means: the engine's default (peft's own targets, where it has them).
  function tuningHint(key, fallback) {
    if (key === "targets" || key === "feedforward") {
      var lora = state.data.tuning.peft.lora, ia3 = state.data.tuning.peft.ia3;
      var text = h("tuning-" + key + "-meaning");
      if (key === "feedforward") {
        return text + " " + (fallback === null ? h("no-peft-default") : h("peft-default", { names: code(fallback.join(",")) }));
      }
      var each = [["LoRA", lora], ["IA³", ia3]].map(function (m) {
        return m[1] === null ? h("no-peft-default-of", { method: m[0] }) : h("peft-default-of", { method: m[0], names: code(m[1].join(",")) });
      });
      return text + " " + each.join(" ");
    }
    return h("tuning-" + key + "-meaning", { value: String(fallback) });
  }

  // The form shows the settings the chosen method reads, and the refusal of one beside it.
  function syncTuning(found) {
    var method = document.getElementById(tuningId("method"));
    if (!method) { return; }
    method.value = state.tuning.method;
    var problem = found && found.problem ? found.problem : null;
    ["method", "rank", "targets", "feedforward", "tokens"].forEach(function (key) {
      var control = document.getElementById(tuningId(key));
      if (key !== "method") {
        document.getElementById(tuningId(key) + "-field").hidden = (TUNING_READS[state.tuning.method] || []).indexOf(key) < 0;
        if (control.value !== state.tuning[key]) { control.value = state.tuning[key]; }
      }
      var mine = problem && problem.field === key;
      document.getElementById(tuningId(key) + "-error").textContent = mine ? problem.text : "";
      if (mine) { control.setAttribute("aria-invalid", "true"); } else { control.removeAttribute("aria-invalid"); }
    });
  }

  function percent(part, whole) {
    if (whole === 0n) { return "0%"; }
    var share = 100 * Number(part) / Number(whole);
    return (share >= 0.01 || share === 0 ? share.toFixed(2) : share.toPrecision(2)) + "%";
  }

  // A layer as a reader pictures it: a Linear from its input's width to its output's, a table's rows and width.
  function layerText(group) {
    if (group.layer === state.data.tuning.linear) { return "Linear " + commas(group.shape[1]) + " → " + commas(group.shape[0]); }
    return group.layer + " " + group.shape.map(commas).join(" × ");
  }

  var SHOWN_NAMES = 3;  // names shown for a group of adapted modules; the rest are counted

  function renderTuning(result) {
    var found = result.tuning, method = state.tuning.method;
    var html = '<section class="calc-method" id="calc-method" aria-labelledby="calc-method-heading"><h3 id="calc-method-heading">' +
      h("method-heading", { method: state.data.tuning.methods.indexOf(method) >= 0 ? h("method-" + method) : escapeHtml(method) }) + "</h3>";
    if (found.problem) {
      return html + '<p class="calc-problems" id="method-refusal" role="alert">' + escapeHtml(found.problem.text) + "</p></section>";
    }
    var r = found.record;
    var row = function (id, label, n, extra) {
      return '<tr><th scope="row">' + label + '</th><td class="n"><strong id="' + id + '" data-value="' + n.toString() + '">' + commas(n) +
        "</strong>" + (extra ? '<br><span class="rounded">' + extra + "</span>" : "") + "</td></tr>";
    };
    html += '<table class="calc-figures"><tbody>';
    html += row("method-trainable", h("trainable"), r.trainable, h("share-of", { share: percent(r.trainable, r.total), total: commas(r.total) }));
    if (method !== "full") { html += row("method-added", h("method-added"), r.added); }
    html += row("method-memory-fp32", h("parameter-memory-fp32"), r.parameter_memory.fp32, "≈ " + binary(r.parameter_memory.fp32));
    html += row("method-memory-bf16", h("parameter-memory-bf16"), r.parameter_memory.bf16_mixed, "≈ " + binary(r.parameter_memory.bf16_mixed));
    html += "</tbody></table>";
    html += '<p class="calc-note">' + h("parameter-memory-note") + "</p>";
    if (r.adapted.length) {
      html += '<p id="method-adapted" data-names="' + escapeHtml(JSON.stringify(r.adapted)) + '">' +
        h("adapted", { targets: code(r.targets.join(",")), count: commas(BigInt(r.adapted.length)) }) + "</p><ul class=\"calc-adapted\">";
      r.groups.forEach(function (g) {
        // Every copy of a repeated module as one name, its layer index written {i} (as the model page writes it).
        var patterns = g.modules.map(window.atlasMethods.indexless).filter(function (n, i, all) { return all.indexOf(n) === i; });
        var names = patterns.slice(0, SHOWN_NAMES).map(code).join(h("list-separator"));
        if (patterns.length > SHOWN_NAMES) { names += h("and-more", { count: commas(BigInt(patterns.length - SHOWN_NAMES)) }); }
        html += "<li>" + code(g.target) + h("colon") + commas(BigInt(g.modules.length)) + " × " + commas(g.each) + " = " +
          commas(BigInt(g.modules.length) * g.each) + h("open-bracket") + escapeHtml(layerText(g)) + h("close-bracket") + h("colon") + names + "</li>";
      });
      html += "</ul>";
    }
    if (r.saved_modules.length) {
      html += '<p id="method-saved" data-names="' + escapeHtml(JSON.stringify(r.saved_modules)) + '">' +
        h("saved-modules", { names: r.saved_modules.map(code).join(h("list-separator")) }) + "</p>";
    }
    return html + "</section>";
  }

  // A training step under the method: the full step's figures, each with full fine-tuning's beside it; or why
  // there is none (the full step's reason, the engine's words where the flow gives no step, a prompt too long).
  function renderMethodStep(result) {
    var html = '<section class="calc-compute" id="calc-compute" aria-labelledby="calc-compute-heading"><h3 id="calc-compute-heading">' +
      h("compute-heading") + "</h3>";
    var f = result.methodStep;
    if (!f) { return result.tuning.problem ? "" : renderCompute(result); }  // refused, or no step at all: as the full step says
    if (f.note) { return html + '<p id="method-step-note">' + escapeHtml(f.note) + "</p></section>"; }
    if (f.refusal) {  // a link to the sequence length's field, where the reader changes it
      return html + '<p class="calc-problems" id="method-step-refusal" role="alert"><a href="#' + fieldId("seq") + '">' +
        escapeHtml(f.refusal) + "</a></p></section>";
    }
    var full = result.compute, tokens = f.batch * f.seq;
    if (f.positions !== f.seq) { html += '<p id="method-step-positions">' + h("method-step-positions", { positions: commas(f.positions) }) + "</p>"; }
    html += '<p class="calc-step">' + h("step-at", { b: commas(f.batch), s: commas(f.seq), tokens: commas(tokens) }) + "</p>";
    html += '<table class="calc-figures"><tbody>' + FIGURES.map(function (row) {
      var n = row[1](f), whole = row[1](full);
      var label = row[0] === "flops-forward" && state.head === "base" ? h("flops-forward-base") : h(row[0]);
      return '<tr><th scope="row">' + label + '</th><td class="n"><strong id="' + row[0] + '" data-value="' + n.toString() + '">' +
        commas(n) + '</strong><br><span class="rounded">≈ ' + approximately(n, row[2], tokens) + '</span><br><span class="rounded calc-against">' +
        h("against-full", { value: commas(whole), change: change(n, whole) }) + "</span></td></tr>";
    }).join("") + "</tbody></table>";
    html += '<p class="calc-note">' + h("method-step-note", { b: commas(full.batch), s: commas(full.seq) }) + "</p>";
    return html + '<p class="calc-note">' + h("compute-note") + "</p></section>";
  }

  // A figure against full fine-tuning's: its change in percent, with a true minus sign.
  function change(n, whole) {
    if (n === whole) { return t("unchanged"); }
    if (whole === 0n) { return "+∞"; }
    var share = 100 * (Number(n) - Number(whole)) / Number(whole);
    var text = Math.abs(share) >= 0.1 ? Math.abs(share).toFixed(1) : Math.abs(share).toPrecision(1);
    return (share < 0 ? "−" : "+") + text + "%";
  }

  // --- fixes: one click from a refused config to one that counts --------------------------------

  // Every config key a condition reads, and every constant it compares with.
  function readsOf(node, keys, constants) {
    if (Array.isArray(node)) { node.forEach(function (n) { readsOf(n, keys, constants); }); return; }
    if (node === null || typeof node !== "object") { return; }
    Object.keys(node).forEach(function (op) {
      var arg = node[op];
      if (op === "key" || op === "truthy" || op === "null") { keys.push(arg); }
      else if (op === "is" || op === "contains") { keys.push(arg[0]); }
      else if (op === "const") { constants.push(fromJson(arg)); }
      else { readsOf(arg, keys, constants); }
    });
  }

  // Values worth trying for one key of a rule that failed: what the rule compares the key with, the
  // default, and for whole numbers the nearest values on either side that the rules accept (nearest).
  function tries(input, rule, config, search) {
    var keys = [], constants = [];
    readsOf(rule.fails, keys, constants);
    var others = keys.filter(function (k) { return k !== input.key && k in config; }).map(function (k) { return config[k]; });
    var current = config[input.key];
    if (input.kind === "flag") { return [!truthy(current)]; }
    var out = others.concat(constants, [fromJson(input.default)]);
    if (input.kind === "text" || input.kind === "json") {
      if (input.optional) { out.push(null); }
      return out.filter(function (v) {
        return v === null || typeof v === "string" || isNumber(v) || Array.isArray(v);
      });
    }
    var low = input.kind === "size" ? BigInt(input.minimum) : -MAX_SIZE - 1n;
    return out.filter(function (v) { return isInt(v) && v >= low && v <= MAX_SIZE; })
      .concat(nearest(input, config, isInt(current) ? current : 0n, search));
  }

  // The whole numbers nearest to ``start`` on either side that every rule accepts, preferring one whose
  // training step runs; and where other problems remain (``search.allowed``: the checks that may still
  // refuse), the nearest that only those refuse, which fixes this one. ``search.complete``: whether a
  // value of this key alone can fix everything (every problem is a check that reads it); ``search.budget``,
  // where several problems are searched, the values all their searches may still try.
  function nearest(input, config, start, search) {
    var out = [], low = input.kind === "size" ? BigInt(input.minimum) : -MAX_SIZE - 1n;
    [-1n, 1n].forEach(function (direction) {
      var v = start, first = null, one = null, left = SEARCH;
      for (var i = 0; i < left; i++) {
        v += direction;
        if (v < low || v > MAX_SIZE || (search.budget && search.budget.left-- <= 0)) { break; }
        var next = Object.assign({}, config);
        next[input.key] = v;
        if (search.complete && !refused(next, state.head)) {
          if (stepRuns(next)) { out.push(v); first = null; break; }  // the nearest whose step runs too
          // The nearest that is counted, and a little further for one whose step runs (another key may
          // stop every step: the search must not go on for its whole range then).
          if (first === null) { first = v; left = Math.min(SEARCH, i + 1 + RUNNABLE_SEARCH); }
        } else if (one === null && search.allowed && !refused(next, state.head, search.allowed)) {
          one = v;
          if (!search.complete) { break; }
        }
      }
      if (first !== null) { out.push(first); }  // else the nearest that is counted
      if (one !== null) { out.push(one); }
    });
    return out;
  }

  // What a change leads to: {complete: true} (a config that counts, with whether its step runs), {complete:
  // false} (fewer problems and none new: it fixes some), or null.
  function outcome(found, changes, extra) {
    var after = verdict(Object.assign({}, state.raw, changes), extra);
    if (!after.problems.length) {
      return countable(after.config, state.head) ? { complete: true, runs: stepRuns(after.config) } : null;
    }
    var had = {}, left = {};
    found.problems.forEach(function (p) { had[p.id] = true; });
    after.problems.forEach(function (p) { left[p.id] = true; });
    var fewer = after.problems.length < found.problems.length && after.problems.every(function (p) { return had[p.id]; });
    var fixed = found.problems.filter(function (p) { return !left[p.id]; }).map(function (p) { return p.id; });
    return fewer ? { complete: false, runs: false, fixed: fixed } : null;
  }

  // The fixes of a refused config: {fixes: [{key, value, text, changes, extra, label}], partial}. Each
  // leads to a config that counts; where no single change does (two rules fail, a value and an unknown
  // key are wrong), each fixes one problem without making another (partial). For a whole number, the
  // nearest below and above.
  function fixesFor(found) {
    var lists = [], seen = {};
    // One list of candidates for a key of a problem: ``offer`` adds a change not seen before, with its outcome.
    function list(input, current) {
      var made = { input: input, current: current, items: [] };
      lists.push(made);
      return function offer(key, value, text, changes, extra, label) {
        var id = JSON.stringify([changes, extra || null]);
        if (seen[id]) { return; }
        seen[id] = true;
        var result = outcome(found, changes, extra || state.extra);
        if (result) {
          made.items.push({ key: key, value: value, text: text, changes: changes, extra: extra, label: label,
            complete: result.complete, runs: result.runs, fixed: result.fixed || [] });
        }
      };
    }
    var failedChecks = {}, budget = found.problems.length > 1 ? { left: SEVERAL_SEARCH } : null;
    found.failed.forEach(function (f) { failedChecks[f.group] = true; });
    found.failed.forEach(function (f) { ruleFixes(f, found, failedChecks, budget, list); });
    found.problems.forEach(function (p) { if (p.id.indexOf("rule:") !== 0) { problemFixes(p, found, budget, list); } });
    var complete = lists.some(function (l) { return l.items.some(function (g) { return g.complete; }); });
    var fixes = [];
    lists.forEach(function (l) {
      var good = l.items.filter(function (g) { return g.complete === complete; });
      fixes = fixes.concat(l.input ? pick(l.input, l.current, good) : good);
    });
    return { fixes: fixes, partial: !complete && fixes.length > 0, together: complete ? null : together(found, fixes) };
  }

  // The first fix of each problem, made at once, where that gives a config that counts (a rule and a
  // typo: the nearest hidden size, and the key renamed); else null.
  function together(found, fixes) {
    var fixed = {}, chosen = [], changes = {}, extra = keyed(state.extra);
    fixes.forEach(function (fix) {
      var overlaps = Object.keys(fix.changes).some(function (k) { return k in changes; });
      if (overlaps || !fix.fixed.some(function (id) { return !fixed[id]; })) { return; }
      fix.fixed.forEach(function (id) { fixed[id] = true; });
      chosen.push(fix);
      Object.assign(changes, fix.changes);
      if (!fix.extra) { return; }
      Object.keys(state.extra).forEach(function (k) { if (!(k in fix.extra)) { delete extra[k]; } });
      Object.keys(fix.extra).forEach(function (k) { if (!(k in state.extra)) { extra[k] = fix.extra[k]; } });
    });
    if (chosen.length < 2) { return null; }
    var result = outcome(found, changes, extra);
    if (!result || !result.complete) { return null; }
    return { changes: changes, extra: extra, label: chosen.map(fixLabel).join(h("and")) };
  }

  // The changes of each key a failed rule reads: its keys, and the flags it reads.
  function ruleFixes(f, found, failedChecks, budget, list) {
    var config = found.config, keys = f.rule.keys.slice(), read = [];
    readsOf(f.rule.fails, read, []);
    read.forEach(function (k) {
      var input = inputOf(k);
      if (input && input.kind === "flag" && keys.indexOf(k) < 0) { keys.push(k); }
    });
    keys.forEach(function (key) {
      var input = inputOf(key);
      if (!input) { return; }
      var current = encode(input.kind, config[key] === undefined ? null : config[key]);
      var allowed = null;
      if (found.problems.length > 1) {
        allowed = Object.assign({}, failedChecks);
        delete allowed[f.group];
      }
      var complete = found.problems.every(function (p) {
        return p.id.indexOf("rule:") === 0 && checkReads(Number(p.id.slice(5)), key);
      });
      var offer = list(input, config[key]);
      tries(input, f.rule, config, { complete: complete, allowed: allowed, budget: budget }).forEach(function (v) {
        var out = nullRefused(key) && v === null;  // left out, not null, which the family refuses
        var text = out ? "" : encode(input.kind, v);
        if (text === current && !out) { return; }
        offer(key, v, text, follow(key, text, {}), undefined, out ? h("fix-remove", { key: code(key) }) : undefined);
      });
    });
  }

  // Whether a check (by index) reads a config key.
  function checkReads(group, key) {
    var read = [];
    checks()[group].forEach(function (rule) { readsOf(rule.fails, read, []); });
    return read.indexOf(key) >= 0;
  }

  // The changes that fix a value's own problem (its default; for a whole number out of range, the nearest
  // the rules accept; a null the family refuses, left out) or an address key's (the near miss of an
  // unknown key, keeping its value, and the key left out).
  function problemFixes(p, found, budget, list) {
    if (p.id.indexOf("key:") === 0) { keyFixes(p, p.id.slice(4), list); return; }
    var input = inputOf(p.key), text = state.raw[p.key];
    var digits = text.trim().replace(/[,_\s]/g, ""), typed = /^-?\d+$/.test(digits) ? BigInt(digits) : undefined;
    var valueOffer = list(input, typed);
    if (nullRefused(p.key) && parse(input, text).value === null) {
      valueOffer(p.key, null, "", { [p.key]: "" }, undefined, h("fix-remove", { key: code(p.key) }));
      return;
    }
    var usual = defaultText(input);
    valueOffer(p.key, fromJson(input.default), usual, follow(p.key, usual, {}));
    if (typed === undefined || input.kind !== "size") { return; }
    var low = BigInt(input.minimum), clamped = typed < low ? low : typed > MAX_SIZE ? MAX_SIZE : typed;
    var values = [clamped];
    if (found.problems.filter(function (q) { return q.gate; }).length === 1) {  // the rules can run without it
      var alone = found.problems.length === 1;
      values = values.concat(nearest(input, Object.assign({}, found.config, { [p.key]: clamped }), clamped,
        { complete: alone, allowed: alone ? null : {}, budget: budget }));
    }
    values.forEach(function (v) { valueOffer(p.key, v, v.toString(), follow(p.key, v.toString(), {})); });
  }

  // The fixes of an address key's problem: the near miss of an unknown key, keeping its value; num_labels
  // as id2label counts them; the key left out.
  function keyFixes(p, key, list) {
    var offer = list(null, null), rest = keyed(state.extra), text = state.extra[key];
    delete rest[key];
    if (p.near) {
      var label = h("fix-rename", { key: code(key), target: code(p.near), value: code(text) });
      if (inputOf(p.near)) { offer(p.near, null, text, follow(p.near, text, {}), rest, label); }
      else { offer(p.near, null, text, {}, renamed(state.extra, key, p.near), label); }
    }
    var labels = key === "id2label" ? labelCount(state.extra) : null;
    if (labels !== null) { offer("num_labels", labels, labels.toString(), { num_labels: labels.toString() }); }
    offer(key, null, "", {}, rest, h("fix-remove", { key: code(key) }));
  }

  // The address's other keys with one renamed, in their order.
  function renamed(extra, key, name) {
    var out = keyed({});
    Object.keys(extra).forEach(function (k) { out[k === key ? name : k] = extra[k]; });
    return out;
  }

  function code(text) { return "<code>" + escapeHtml(text) + "</code>"; }

  // Of one key's good changes, those to show: only those whose step runs where some does (with rotary
  // positions, a hidden_size that makes the heads' size odd is counted but cannot train, where the next
  // even one can; an activation without declared saved tensors has no step); for a whole number the
  // nearest below and above ``current``.
  function pick(input, current, good) {
    if (good.some(function (g) { return g.runs; })) { good = good.filter(function (g) { return g.runs; }); }
    if ((input.kind === "size" || input.kind === "int") && isInt(current)) {
      var below = good.filter(function (g) { return isInt(g.value) && g.value < current; })
        .sort(function (a, b) { return a.value > b.value ? -1 : 1; })[0];
      var above = good.filter(function (g) { return isInt(g.value) && g.value > current; })
        .sort(function (a, b) { return a.value < b.value ? -1 : 1; })[0];
      var left = good.filter(function (g) { return !isInt(g.value); });  // left out
      return [below, above].filter(Boolean).concat(left);
    }
    if (input.kind === "size" || input.kind === "int") {
      // Left empty: the default first, then the nearest whole number to it.
      var d = isInt(fromJson(input.default)) ? fromJson(input.default) : 0n;
      var away = function (g) { return !isInt(g.value) ? -1n : g.value > d ? g.value - d : d - g.value; };
      return good.sort(function (a, b) { return away(a) < away(b) ? -1 : away(a) > away(b) ? 1 : 0; }).slice(0, 2);
    }
    if (good.length > 3) {
      // A rule that names many values (every activation function): the default, then the first two others.
      var usual = encode(input.kind, fromJson(input.default));
      return good.filter(function (g) { return g.text === usual; })
        .concat(good.filter(function (g) { return g.text !== usual; })).slice(0, 3);
    }
    return good;
  }

  // The changes typing ``text`` into ``key`` makes: with "keep I = 4 × H" on, H brings I along. Typing I
  // sets the box to whether I = 4 × H still holds.
  function follow(key, text, changes) {
    changes[key] = text;
    var ratio = ratioKeys();
    if (state.keepRatio && ratio && key === ratio.hidden) {
      var parsed = parse(inputOf(key), text);
      if (!parsed.error && isInt(parsed.value)) { changes[ratio.ffn] = (4n * parsed.value).toString(); }
    }
    if (ratio && key === ratio.ffn) {
      state.keepRatio = holdsRatio(ratio, state.raw[ratio.hidden], text);
      var box = document.getElementById("calc-keep-ratio");
      if (box) { box.checked = state.keepRatio; }
    }
    return changes;
  }

  // Whether I = 4 × H holds for these texts of H and I.
  function holdsRatio(ratio, hiddenText, ffnText) {
    var hidden = parse(inputOf(ratio.hidden), hiddenText), ffn = parse(inputOf(ratio.ffn), ffnText);
    return !hidden.error && !ffn.error && isInt(hidden.value) && isInt(ffn.value) && ffn.value === 4n * hidden.value;
  }

  function apply(changes) {
    Object.keys(changes).forEach(function (key) { state.raw[key] = changes[key]; state.given[key] = true; });
  }

  // The keys of H and I when the family has both as plain sizes (such as hidden_size and intermediate_size).
  function ratioKeys() {
    var bySymbol = {};
    state.data.inputs.forEach(function (i) { if (i.symbol && i.kind === "size") { bySymbol[i.symbol] = i.key; } });
    return bySymbol.H && bySymbol.I ? { hidden: bySymbol.H, ffn: bySymbol.I } : null;
  }

  // --- the answer check: what the errata's published methods give on this config ----------------

  // A method's total: the exact count, less the steps it replaces, plus what it counts instead; null
  // when the config lacks a symbol it uses or a step it replaces (generator/analysis/mistakes.py: evaluate).
  function mistakeTotal(mistake, result) {
    var needs = mistake.theirs.every(function (term) { return term[1].every(function (p) { return p[0] in result.values; }); });
    if (!needs) { return null; }
    var replaced = 0n;
    for (var i = 0; i < mistake.replaces.length; i++) {
      var key = mistake.replaces[i][0], steps = mistake.replaces[i][1];  // a block's key and its steps' keys
      var item = result.blocks.filter(function (b) { return b.block.key === key; })[0];
      if (!item) { return null; }
      var found = 0;
      item.block.steps.forEach(function (step, j) {
        if (!steps.length || steps.indexOf(step.key) >= 0) { replaced += item.steps[j] * item.copies; found += 1; }
      });
      if (found !== (steps.length || item.block.steps.length)) { return null; }
    }
    var theirs = evaluate(mistake.theirs, result.values);
    return mistake.replaces.length ? result.total - replaced + theirs : theirs;
  }

  function mistakes(result) {
    var found = [];
    function add(value, erratum, printed) {
      if (answers.titles[erratum] && value !== result.total) {
        found.push({ value: value.toString(), erratum: erratum, title: answers.titles[erratum], printed: printed });
      }
    }
    state.data.mistakes.forEach(function (m) {
      var v = mistakeTotal(m, result);
      if (v !== null) { add(v, m.erratum, false); }
    });
    // "The pooler or the heads, silently in or out": the same config as the family's other heads build it.
    familyEntry(state.family).heads.forEach(function (head) {
      if (head !== state.head && countable(result.config, head)) { add(count(result.config, head).total, "pooler-and-heads", false); }
    });
    var here = query(state.raw, {});
    answers.printed.forEach(function (p) { if (p.query === here) { add(BigInt(p.value), p.erratum, true); } });
    return found;
  }

  function checkStrings() {
    var out = {};
    Object.keys(S).forEach(function (k) { if (k.indexOf("check-") === 0) { out[k.slice(6)] = S[k]; } });
    return out;
  }

  // --- the form ---------------------------------------------------------------------------------

  function fieldId(key) { return "calc-" + key.replace(/[^A-Za-z0-9_-]/g, "_"); }

  function el(tag, attributes, html) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      if (attributes[name] !== null && attributes[name] !== undefined) { node.setAttribute(name, attributes[name]); }
    });
    if (html !== undefined) { node.innerHTML = html; }
    return node;
  }

  function familyEntry(name) {
    return families.filter(function (f) { return f.name === name; })[0] || null;
  }

  function buildShell() {
    root.innerHTML = "";
    var layout = el("div", { class: "calc-layout" });
    var form = el("form", { class: "calc-form", id: "calc-form", "aria-labelledby": "calc-configuration" });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.appendChild(el("h2", { id: "calc-configuration" }, h("configuration")));
    var choose = el("div", { class: "calc-choose" });
    var family = el("select", { id: "calc-family", name: "family", "aria-describedby": "calc-origin" });
    families.forEach(function (f) { family.appendChild(el("option", { value: f.name }, escapeHtml(f.title))); });
    var head = el("select", { id: "calc-head", name: "head" });
    var model = el("select", { id: "calc-model" });
    choose.appendChild(wrapField(el("label", { for: "calc-family" }, h("family")), family));
    choose.appendChild(el("p", { class: "calc-origin", id: "calc-origin" }));
    choose.appendChild(wrapField(el("label", { for: "calc-head" }, h("head")), head));
    choose.appendChild(wrapField(el("label", { for: "calc-model" }, h("start-model")), model));
    form.appendChild(choose);
    form.appendChild(el("div", { id: "calc-fields" }));
    // Sticks to the bottom of a phone's screen while the form scrolls past (calculator.css).
    form.appendChild(el("p", { class: "calc-live" }, "<span>" + h("live-total") + '</span> <strong id="calc-live-total">—</strong> ' +
      '<a href="#calc-result-heading">' + h("see-derivation") + "</a>"));
    var actions = el("p", { class: "calc-actions" });
    var reset = el("button", { type: "button", id: "calc-reset" }, h("reset"));
    actions.appendChild(reset);
    form.appendChild(actions);
    layout.appendChild(form);
    var result = el("div", { class: "calc-result", id: "calc-result" });
    result.appendChild(el("h2", { id: "calc-result-heading" }, h("result")));
    result.appendChild(el("div", { id: "calc-summary" }));
    result.appendChild(buildCheck());
    result.appendChild(el("div", { id: "calc-body", class: "calc-body" }));
    layout.appendChild(result);
    root.appendChild(layout);

    family.addEventListener("change", function () { switchFamily(family.value, null, {}); });
    head.addEventListener("change", function () { state.head = head.value; update(); });
    model.addEventListener("change", function () {
      if (model.value) { applyAddress(new URLSearchParams(model.value)); }
      model.value = "";
    });
    reset.addEventListener("click", function () { switchFamily(state.family, state.head, {}); });
    root.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a[data-fix], a[data-start]");
      if (!link) { return; }
      event.preventDefault();
      if (link.hasAttribute("data-start")) { applyAddress(new URLSearchParams(link.getAttribute("data-start"))); return; }
      var fix = JSON.parse(link.getAttribute("data-fix"));
      apply(fix.changes);
      if (fix.extra) { state.extra = keyed(fix.extra); }
      update();
      document.getElementById("total").focus();
    });
  }

  // "I got 218,671,424: where did I go wrong?", answered by static/check.js with this config's numbers.
  function buildCheck() {
    var form = el("form", { class: "check", id: "calc-check", "aria-labelledby": "calc-check-legend" });
    form.appendChild(el("p", { id: "calc-check-legend", class: "calc-check-legend" }, h("check-legend")));
    form.appendChild(el("label", { for: "calc-check-answer" }, h("check-label")));
    form.appendChild(el("input", { id: "calc-check-answer", type: "text", inputmode: "decimal", autocomplete: "off",
      spellcheck: "false", "aria-describedby": "calc-check-hint" }));
    form.appendChild(el("button", { type: "submit" }, h("check-button")));
    form.appendChild(el("small", { id: "calc-check-hint" }, h("check-close")));
    form.appendChild(el("output", { for: "calc-check-answer", "aria-live": "polite" }));
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (!state.checkData || !window.atlasCheck) { return; }
      form.querySelector("output").innerHTML = window.atlasCheck.verdict(
        checkStrings(), form.querySelector("input").value, state.checkData, answers.errata);
    });
    return form;
  }

  function wrapField(label, control) {
    var box = el("div", { class: "calc-field" });
    box.appendChild(label);
    box.appendChild(control);
    return box;
  }

  function fillHeadAndModels() {
    var entry = familyEntry(state.family);
    var head = document.getElementById("calc-head");
    head.innerHTML = "";
    entry.heads.forEach(function (x) { head.appendChild(el("option", { value: x }, escapeHtml(x))); });
    head.value = state.head;
    var model = document.getElementById("calc-model");
    model.innerHTML = "";
    model.appendChild(el("option", { value: "" }, entry.models.length ? h("choose") : h("none-in-catalog")));
    entry.models.forEach(function (m) { model.appendChild(el("option", { value: m.query }, escapeHtml(m.title))); });
    document.getElementById("calc-family").value = state.family;
    var origin = h("origin") + " " + escapeHtml(entry.origin);
    if (entry.start) {
      origin += ' <a href="?' + escapeHtml(entry.start.query) + '" data-start="' + escapeHtml(entry.start.query) + '">' +
        h("start-from", { model: escapeHtml(entry.start.title) }) + "</a>";
    }
    document.getElementById("calc-origin").innerHTML = tidySpacing(origin);
  }

  var GROUPS = ["training", "sizes", "structure", "checked", "compute"];

  function buildFields() {
    var container = document.getElementById("calc-fields");
    container.innerHTML = "";
    GROUPS.forEach(function (group) {
      var inputs = state.data.inputs.filter(function (i) { return i.group === group; });
      if (!inputs.length) { return; }
      var set = el("fieldset", { class: "calc-group" });
      set.appendChild(el("legend", {}, h(group)));
      set.appendChild(el("p", { class: "calc-hint" }, h(group + "-hint")));
      inputs.forEach(function (input) {
        set.appendChild(buildField(input));
        var ratio = ratioKeys();
        if (ratio && input.key === ratio.hidden) { set.appendChild(buildRatio(ratio)); }
      });
      container.appendChild(set);
      if (group === "training") { container.appendChild(buildTuning()); }
    });
    // A family whose step is not measured has no training group: the method comes first.
    if (!document.getElementById("calc-tuning-fields")) { container.insertBefore(buildTuning(), container.firstChild); }
  }

  // "Keep I at 4 × H when H changes": on when the model's configuration holds I = 4 × H, as most do, so
  // that a new H brings I along as a student expects (6 layers of width 512 have I = 2,048). A value an
  // address gives is never changed: the box acts only on what the reader types.
  function buildRatio(ratio) {
    var box = el("div", { class: "calc-field calc-flag calc-ratio" });
    var control = el("input", { type: "checkbox", id: "calc-keep-ratio" });
    state.keepRatio = holdsRatio(ratio, state.raw[ratio.hidden], state.raw[ratio.ffn]);
    control.checked = state.keepRatio;
    control.addEventListener("change", function () {
      state.keepRatio = control.checked;
      if (state.keepRatio) { apply(follow(ratio.hidden, state.raw[ratio.hidden], {})); update(); }
    });
    box.appendChild(control);
    box.appendChild(el("label", { for: "calc-keep-ratio" }, h("keep-ratio", {
      ffn: "<var>I</var>", hidden: "<var>H</var>"
    })));
    return box;
  }

  function buildField(input) {
    var id = fieldId(input.key);
    var box = el("div", { class: "calc-field calc-" + input.kind, id: id + "-field" });
    var name = (input.symbol ? "<var>" + escapeHtml(input.symbol) + "</var> " : "") + "<code>" + escapeHtml(input.key) + "</code>";
    var hint = el("span", { class: "calc-meaning", id: id + "-meaning" }, escapeHtml(input.meaning) +
      (input.kind === "json" ? h("json-hint") : "") +
      (input.optional && input.default === null ? h("may-be-empty") : ""));
    var error = el("span", { class: "calc-error", id: id + "-error" });
    var control;
    if (input.kind === "flag") {
      control = el("input", { type: "checkbox", id: id, name: input.key, "aria-describedby": id + "-meaning " + id + "-error" });
      control.checked = state.raw[input.key] === "true";
      control.addEventListener("change", function () {
        apply(follow(input.key, control.checked ? "true" : "false", {}));
        update();
      });
      box.appendChild(control);
      box.appendChild(el("label", { for: id }, name));
    } else {
      control = el("input", {
        type: "text", id: id, name: input.key, spellcheck: "false", autocomplete: "off",
        inputmode: input.kind === "size" || input.kind === "int" ? "numeric" : null,
        "aria-describedby": id + "-meaning " + id + "-error"
      });
      control.value = state.raw[input.key];
      control.addEventListener("input", function () {
        apply(follow(input.key, control.value, {}));
        update();
      });
      box.appendChild(el("label", { for: id }, name));
      box.appendChild(control);
    }
    box.appendChild(hint);
    box.appendChild(error);
    return box;
  }

  function syncFields() {
    state.data.inputs.forEach(function (input) {
      var control = document.getElementById(fieldId(input.key));
      if (!control) { return; }
      if (input.key === "seq") { control.placeholder = seqPlaceholder(); }
      if (input.kind === "flag") { control.checked = state.raw[input.key] === "true"; }
      else if (control.value !== state.raw[input.key]) { control.value = state.raw[input.key]; }
    });
  }

  // An empty s means 512, or the longest the model takes where shorter: the field shows which, for the values typed.
  function seqPlaceholder() {
    var c = state.data.compute, probe = { seq: null };
    c.longest_reads.forEach(function (key) {
      var input = inputOf(key);
      probe[key] = input ? parse(input, state.raw[key]).value : null;
    });
    return sequenceLength(probe).toString();
  }

  // --- family, address ------------------------------------------------------------------------

  // Each switch is numbered: a document that arrives after a later switch was asked for (a large family's,
  // chosen, then another) is not shown, or it would replace the family the form was last given.
  var switches = 0;

  function switchFamily(name, head, values) {
    var asked = ++switches;
    var entry = familyEntry(name);
    var problems = [];
    if (!entry) {
      problems.push(t("no-family", { family: JSON.stringify(name), title: families[0].title }));
      entry = families[0];
    }
    return load(entry.name).then(function (data) {
      if (asked !== switches) { return; }
      state.addressProblems = problems;
      state.family = entry.name;
      state.data = data;
      // The page's words frame what the export says of an input (once: a family's data is loaded once); b, s,
      // the keys only the compute reads and the keys a rule checks carry no meaning of their own there.
      data.inputs.forEach(function (input) {
        if (input.worded) { return; }
        input.worded = true;
        if (input.group === "structure") {
          var decided = { meaning: input.meaning };
          input.meaning = input.kind === "flag" ? t("structure-when-true", decided) : t("structure-decides", decided);
        } else if (!input.meaning) {
          input.meaning = S["meaning-" + input.key] || (input.group === "checked" ? S["checked-meaning"] : S["compute-meaning"]) || "";
        }
      });
      if (head && entry.heads.indexOf(head) < 0) {
        state.addressProblems.push(t("no-head", { title: entry.title, head: JSON.stringify(head), first: entry.heads[0] }));
        head = null;
      }
      state.head = head || entry.heads[0];
      state.raw = {};
      state.given = {};
      data.inputs.forEach(function (input) {
        var preset = entry.preset[input.key];
        state.raw[input.key] = preset !== undefined && preset !== null && input.default === null
          ? encode(input.kind, fromJson(preset)) : defaultText(input);
      });
      var extra = keyed({});
      Object.keys(values).forEach(function (key) {
        if (inputOf(key)) { state.raw[key] = values[key]; state.given[key] = true; } else { extra[key] = values[key]; }
      });
      state.extra = readAliases(extra);
      fillHeadAndModels();
      buildFields();
      update();
    }).catch(function (error) {
      if (asked === switches) { showFailure(t("load-failed", { title: entry.title, error: error.message })); }
    });
  }

  // An address with no method keeps the one chosen (a catalog model picked from the list); ``fresh`` starts from full.
  function applyAddress(params, fresh) {
    var values = keyed({});
    if (fresh) { state.tuning = freshTuning(); }
    TUNING_KEYS.forEach(function (k) { if (params.has(k)) { state.tuning[k] = params.get(k); } });
    params.forEach(function (v, k) { if (k !== "family" && k !== "head" && TUNING_KEYS.indexOf(k) < 0) { values[k] = v; } });
    return switchFamily(params.get("family") || root.getAttribute("data-first"), params.get("head"), values);
  }

  // The query string of a config: family, head, each input that was given or differs from its default (one
  // the family refuses null for, left empty, is left out), then the address's other keys as written.
  function query(raw, given, extra) {
    var parts = ["family=" + encodeURIComponent(state.family), "head=" + encodeURIComponent(state.head)];
    state.data.inputs.forEach(function (input) {
      var text = raw[input.key];
      if (nullRefused(input.key) && text.trim() === "") { return; }
      var parsed = parse(input, text);
      var canonical = parsed.error ? text : encode(input.kind, parsed.value);
      if (given[input.key] || canonical !== encode(input.kind, fromJson(input.default))) {
        parts.push(encodeURIComponent(input.key) + "=" + queryValue(canonical));
      }
    });
    Object.keys(extra || {}).forEach(function (key) { parts.push(encodeURIComponent(key) + "=" + queryValue(extra[key])); });
    return parts.join("&") + tuningQuery();
  }

  // As generator/analysis/calculator.query writes a value: only "," and ":" are left as they are.
  function queryValue(text) { return encodeURIComponent(text).replace(/%2C/g, ",").replace(/%3A/g, ":"); }

  function address() { return "?" + query(state.raw, state.given, state.extra); }

  // --- drawing the result -----------------------------------------------------------------------

  function sentence(text) { return text.charAt(0).toUpperCase() + text.slice(1); }

  function tensorName(block, tensor) {
    var first = block.repeat.map(function (_, i) { return i === 0 ? block.start : 0; });
    var prefix = block.prefix.replace(/\{(\d+)\}/g, function (_, i) { return String(first[Number(i)]); });
    return prefix + tensor.name.replace(/\{n\}/g, "0");
  }

  function shapeText(shape, values) {
    return "[" + shape.map(function (d) { return commas(evaluate(d, values)); }).join(", ") + "]";
  }

  function renderBlock(item, result) {
    var block = item.block, values = result.values;
    var id = "calc-d-" + block.key;
    var title = escapeHtml(block.title);
    var repeatNote = "";
    if (block.repeat.length) {
      var copies = item.copies === 0n ? h("repeat-none") : h("repeat-one-of", { copies: commas(item.copies) });
      repeatNote = " (" + copies + ": " + block.repeat.map(function (s) {
        return "<var>" + escapeHtml(s) + "</var> = " + commas(values[s]);
      }).join(", ") + ")";
    }
    var html = '<h3 id="' + id + '">' + escapeHtml(sentence(block.title)) + repeatNote + "</h3>";
    html += '<div class="scroll stacks" role="region" tabindex="0" aria-label="' + h("derivation-of", { title: title }) + '">';
    html += '<table class="derivation stack"><thead><tr><th scope="col">' + h("step") + '</th><th scope="col">' + h("formula") +
      '</th><th scope="col">' + h("with-numbers") + '</th><th scope="col" class="n count">' + h("parameters") + "</th></tr></thead><tbody>";
    block.steps.forEach(function (step, i) {
      var ties = step.tensors.filter(function (x) { return x.tied_to; });
      var counted = step.formula.length > 0;
      html += '<tr><th scope="row">' + escapeHtml(step.label) + "</th>";
      var tieText = ties.length ? h("reuses", {
        names: ties.map(function (x) { return "<code>" + escapeHtml(x.tied_to) + "</code>"; }).join(h("and"))
      }) : "";
      if (!counted) {
        html += '<td colspan="2">' + tieText + h("nothing-new") + "</td>";
      } else {
        html += "<td>" + formula(step.symbolic) + (tieText ? '<br><span class="calc-note">' + tieText + "</span>" : "") + "</td>";
        html += "<td>" + formula(substitute(step.symbolic, values)) + "</td>";
      }
      html += '<td class="n count">' + commas(item.steps[i]) + "</td></tr>";
    });
    html += '</tbody><tfoot><tr><th scope="row">' + escapeHtml(sentence(block.title)) + "</th><td>" +
      formula(block.expression) + '</td><td></td><td class="n count">' + commas(item.value) + "</td></tr>";
    if (block.repeat.length) {
      html += '<tr><th scope="row">× ' + commas(item.copies) + "</th><td>" + formula(block.subtotal_expression) +
        "</td><td>" + commas(item.copies) + " × " + commas(item.value) + '</td><td class="n count">' + commas(item.subtotal) + "</td></tr>";
    }
    html += "</tfoot></table></div>";
    if (block.applied) {
      var stored = item.copies > 1n ? h("stored-many", { copies: commas(item.copies), title: title }) : h("stored-one", { title: title });
      var applied = "<var>" + escapeHtml(block.applied) + "</var>";
      html += '<p class="aside">' + h("shared-depth", { stored: stored, applied: applied, times: commas(values[block.applied]) }) + "</p>";
    }
    html += '<details class="calc-tensors"><summary>' + h(block.repeat.length ? "tensors-of-one" : "tensors-of-the", { title: title }) +
      "</summary><ul>";
    block.steps.forEach(function (step) {
      var copies = step.copies ? evaluate(step.copies, values) : null;
      step.tensors.forEach(function (tensor) {
        html += "<li><code>" + escapeHtml(tensorName(block, tensor)) + "</code> ";
        if (tensor.tied_to) { html += h("tied-to") + " <code>" + escapeHtml(tensor.tied_to) + "</code>"; }
        else {
          html += formula(tensor.shape.length === 1 ? polyOf(tensor.shape[0], result) : shapeExpr(tensor.shape, result)) +
            " = " + escapeHtml(shapeText(tensor.shape, values));
        }
        if (copies !== null) { html += " " + h("in-each-copy", { copies: commas(copies) }); }
        html += "</li>";
      });
    });
    html += "</ul></details>";
    return html;
  }

  function polyOf(poly, result) {
    return polyExpr(poly.map(function (x) { return [BigInt(x[0]), x[1]]; }), result.order);
  }

  function shapeExpr(shape, result) {
    return { mul: shape.map(function (d) {
      var e = polyOf(d, result);
      return "add" in e ? { paren: e } : e;
    }), sign: "×" };
  }

  function linkTo(where) {
    return '<a href="' + escapeHtml(where) + '">' + escapeHtml("calculator/" + where) + "</a>";
  }

  // The derivation of a counted config: symbols, blocks, subtotals, closed form.
  function renderBody(result) {
    var data = state.data;
    result.order = data.symbols.map(function (s) { return s.name; });
    var used = {};
    result.blocks.forEach(function (b) { b.block.symbols.forEach(function (s) { used[s] = true; }); });
    var symbolRows = data.symbols.filter(function (s) { return used[s.name]; }).map(function (s) {
      return '<tr><th scope="row"><var>' + escapeHtml(s.name) + "</var></th><td><code>" + escapeHtml(s.key) +
        '</code></td><td class="n count">' + commas(result.values[s.name]) + "</td><td>" + escapeHtml(s.meaning) + "</td></tr>";
    }).join("");
    var html = '<p class="calc-stale-note" id="calc-stale-note" role="status"></p>';
    html += '<div class="scroll" role="region" tabindex="0" aria-label="' + h("symbols") + '"><table class="symbols stack">' +
      "<caption>" + h("symbols-caption") + "</caption>" +
      '<thead><tr><th scope="col">' + h("symbol") + '</th><th scope="col">' + h("config-key") + '</th><th scope="col" class="n count">' +
      h("value") + '</th><th scope="col">' + h("meaning") + "</th></tr></thead><tbody>" + symbolRows + "</tbody></table></div>";
    html += '<h2 id="calc-derivation">' + h("derivation") + "</h2>";
    html += "<p>" + h("derivation-intro") + "</p>";
    result.blocks.forEach(function (item) { html += renderBlock(item, result); });
    html += '<h2 id="calc-subtotals">' + h("subtotals") + "</h2>";
    html += '<div class="scroll stacks" role="region" tabindex="0" aria-label="' + h("subtotals") + '"><table class="subtotals stack">' +
      '<thead><tr><th scope="col">' + h("component") + '</th><th scope="col">' + h("formula") + '</th><th scope="col" class="n count">' +
      h("parameters") + "</th></tr></thead><tbody>";
    result.blocks.forEach(function (item) {
      var e = item.block.subtotal_expression || item.block.expression;
      html += '<tr><th scope="row">' + escapeHtml(sentence(item.block.title)) + "</th><td>" + formula(e) +
        '</td><td class="n count" data-block="' + escapeHtml(item.block.key) + '" data-value="' + item.subtotal.toString() + '">' +
        commas(item.subtotal) + "</td></tr>";
    });
    html += '</tbody><tfoot><tr><th scope="row">' + h("total") + '</th><td></td><td class="n count">' + commas(result.total) +
      "</td></tr></tfoot></table></div>";
    var closed = closedForm(result.blocks.map(function (b) { return b.block; }), result.order);
    html += '<h2 id="calc-closed-form">' + h("closed-form") + "</h2>";
    html += '<div class="scroll" role="region" tabindex="0" aria-label="' + h("closed-form") + '"><table class="derivation total"><tbody>' +
      '<tr><th scope="row">' + h("in-symbols") + '</th><td id="calc-closed">' + formula(closed) + "</td></tr>" +
      '<tr><th scope="row">' + h("with-numbers") + "</th><td>" + formula(substitute(closed, result.values)) + "</td></tr>" +
      '<tr><th scope="row">' + h("total") + "</th><td><strong>" + commas(result.total) + "</strong></td></tr></tbody></table></div>";
    return html;
  }

  // The six figures of a training step, each with its exact integer in data-value.
  var FIGURES = [
    ["flops-forward", function (f) { return f.forward; }, "flops"],
    ["flops-backward", function (f) { return f.backward; }, "flops"],
    ["activations-fp32", function (f) { return f.fp32; }, "bytes"],
    ["activations-bf16", function (f) { return f.bf16; }, "bytes"],
    ["training-memory-fp32", function (f) { return f.memory.fp32; }, "bytes"],
    ["training-memory-bf16", function (f) { return f.memory.bf16_mixed; }, "bytes"]
  ];

  // Bytes in the largest binary unit that leaves at least 1, as the model pages print them
  // (generator/site/formats.py binary): 417.6 MiB, 1.63 GiB; under 1 KiB, a fraction of one (the
  // exact count is beside it, and a unit needs no translating).
  function binary(n) {
    var units = [[1073741824, "GiB"], [1048576, "MiB"], [1024, "KiB"]];
    for (var i = 0; i < units.length; i++) {
      var value = Number(n) / units[i][0];
      if (value >= 1 || i === units.length - 1) {
        return (value < 10 ? value.toFixed(2) : value.toFixed(1)) + " " + units[i][1];
      }
    }
  }

  function approximately(n, unit, tokens) {
    if (unit === "bytes") { return binary(n); }
    var scales = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]];
    var scale = scales.filter(function (x) { return Number(n) >= x[0]; })[0] || scales[scales.length - 1];
    return (Number(n) / scale[0]).toFixed(2) + " " + scale[1] + "FLOP · " + h("per-token", { flops: quotient(n, tokens) });
  }

  function renderCompute(result) {
    var html = '<section class="calc-compute" id="calc-compute" aria-labelledby="calc-compute-heading"><h3 id="calc-compute-heading">' +
      h("compute-heading") + "</h3>";
    if (!state.data.compute.measured) { return html + "<p>" + h("compute-not-measured", { title: escapeHtml(familyEntry(state.family).title) }) + "</p></section>"; }
    if (result.computeProblem) { return html + '<p class="calc-problems" role="alert">' + escapeHtml(result.computeProblem) + "</p></section>"; }
    var f = result.compute, tokens = f.batch * f.seq;
    html += '<p class="calc-step">' + h("step-at", { b: commas(f.batch), s: commas(f.seq), tokens: commas(tokens) }) + "</p>";
    html += '<table class="calc-figures"><tbody>' + FIGURES.map(function (row) {
      var n = row[1](f);
      // A base model's step has no loss (its backward starts from last_hidden_state.sum()), as on its page.
      var label = row[0] === "flops-forward" && state.head === "base" ? h("flops-forward-base") : h(row[0]);
      return '<tr><th scope="row">' + label + '</th><td class="n"><strong id="' + row[0] + '" data-value="' + n.toString() + '">' +
        commas(n) + '</strong><br><span class="rounded">≈ ' + approximately(n, row[2], tokens) + "</span></td></tr>";
    }).join("") + "</tbody></table>";
    return html + '<p class="calc-note">' + h("compute-note") + "</p></section>";
  }

  function renderProblems(result) {
    var list = result.problems.map(function (p) {
      var text = p.key !== null && inputOf(p.key) ? '<a href="#' + fieldId(p.key) + '">' + escapeHtml(p.text) + "</a>" : escapeHtml(p.text);
      return "<li>" + text + "</li>";
    }).join("");
    var html = '<div class="calc-problems" role="alert"><p>' + h("refused") + "</p><ul>" + list + "</ul></div>";
    if (result.fixes.length) {
      html += '<div class="calc-fixes"><p>' + (result.partial ? h("fixes-each") : h("fixes")) + "</p><ul>" + result.fixes.map(function (fix) {
        return "<li>" + fixLink(fix, fixLabel(fix)) + "</li>";
      }).join("") + "</ul>";
      if (result.together) { html += "<p>" + h("fix-all", { fixes: fixLink(result.together, result.together.label) }) + "</p>"; }
      html += "</div>";
    }
    return html;
  }

  // A fix's words: "set hidden_size (H) to 768", or its own (a key renamed or left out).
  function fixLabel(fix) {
    if (fix.label) { return fix.label; }
    var input = inputOf(fix.key);
    var key = code(fix.key) + (input && input.symbol ? " (<var>" + escapeHtml(input.symbol) + "</var>)" : "");
    return h("fix", { key: key, value: code(isInt(fix.value) ? commas(fix.value) : fix.text) });
  }

  // A fix as a link: the address it leads to, and the changes the script makes on a click.
  function fixLink(fix, label) {
    var changes = Object.assign({}, state.raw, fix.changes), given = Object.assign({}, state.given);
    Object.keys(fix.changes).forEach(function (k) { given[k] = true; });
    var data = JSON.stringify({ changes: fix.changes, extra: fix.extra });
    return '<a href="?' + escapeHtml(query(changes, given, fix.extra || state.extra)) + '" data-fix="' + escapeHtml(data) + '">' +
      label + "</a>";
  }

  function renderResult(result) {
    var summary = document.getElementById("calc-summary"), body = document.getElementById("calc-body");
    var check = document.getElementById("calc-check");
    var html;
    if (result.problems) {
      html = '<p class="total" aria-live="polite"><span class="label">' + h("parameters") + '</span> <strong id="total" tabindex="-1">—</strong></p>';
      html += renderProblems(result);
      html += '<p class="calc-link">' + h("link") + " " + linkTo(address()) + "</p>";
      summary.innerHTML = html;
      check.hidden = true;
      state.checkData = null;
      if (state.last) {
        body.classList.add("calc-stale");
        document.getElementById("calc-stale-note").innerHTML = h("stale", { link: linkTo(state.last) });
      }
      return;
    }
    html = '<p class="total" aria-live="polite"><span class="label">' + h("parameters-of", { class_name: "<code>" + escapeHtml(result.className) + "</code>" }) +
      '</span> <strong id="total" tabindex="-1" data-value="' + result.total.toString() + '">' + commas(result.total) +
      "</strong> " + roundedTotal(result.total) + "</p>";
    html += '<p class="calc-link">' + h("link") + ' <a id="calc-link" href="' + escapeHtml(address()) + '">' +
      escapeHtml("calculator/" + address()) + "</a></p>";
    html += renderTuning(result);
    html += state.tuning.method === "full" ? renderCompute(result) : renderMethodStep(result);
    summary.innerHTML = html;
    body.innerHTML = renderBody(result);
    body.classList.remove("calc-stale");
    state.last = address();
    var fresh = { answer: result.total.toString(), whole: null, mistakes: mistakes(result) };
    if (!state.checkData || state.checkData.answer !== fresh.answer) { check.querySelector("output").innerHTML = ""; }
    state.checkData = fresh;
    check.hidden = false;
  }

  function showFieldErrors(result) {
    state.data.inputs.forEach(function (input) {
      var id = fieldId(input.key);
      var error = document.getElementById(id + "-error");
      var control = document.getElementById(id);
      if (!error || !control) { return; }
      var mine = (result.problems || []).filter(function (p) { return p.key === input.key; });
      error.textContent = mine.length ? mine[0].text.slice(input.key.length + 2) : "";
      if (mine.length) { control.setAttribute("aria-invalid", "true"); } else { control.removeAttribute("aria-invalid"); }
    });
  }

  function showAddressProblems(result) {
    var notes = document.getElementById("calc-address-notes");
    if (!notes) {
      notes = el("div", { id: "calc-address-notes", class: "calc-notes", role: "status" });
      root.insertBefore(notes, root.firstChild);
    }
    var all = state.addressProblems.concat(extraNotes(result.problems || []));
    notes.innerHTML = all.length
      ? "<p>" + h("from-address") + "</p><ul>" + all.map(function (p) { return "<li>" + escapeHtml(p) + "</li>"; }).join("") + "</ul>"
      : "";
  }

  function showFailure(text) {
    var summary = document.getElementById("calc-summary");
    if (summary) { summary.innerHTML = '<p class="calc-problems" role="alert">' + escapeHtml(text) + "</p>"; }
  }

  function update() {
    syncFields();
    var result = evaluateAll();
    renderResult(result);
    document.getElementById("calc-live-total").textContent = result.problems ? "—" : commas(result.total);
    showFieldErrors(result);
    syncTuning(result.tuning);
    showAddressProblems(result);
    var target = window.location.pathname + address() + window.location.hash;
    if (window.location.search !== address()) { window.history.replaceState(null, "", target); }
  }

  // --- start ------------------------------------------------------------------------------------

  function json(node, name, fallback) {
    try { return JSON.parse(node.getAttribute(name) || ""); } catch (e) { return fallback; }
  }

  function readFamilies() {
    var items = document.querySelectorAll("#calc-families [data-family]");
    return Array.prototype.map.call(items, function (item) {
      return {
        name: item.getAttribute("data-family"),
        title: item.getAttribute("data-title"),
        heads: item.getAttribute("data-heads").split(" "),
        preset: json(item, "data-preset", {}),
        origin: item.getAttribute("data-origin") || "",
        start: item.hasAttribute("data-start")
          ? { query: item.getAttribute("data-start"), title: item.getAttribute("data-start-title") } : null,
        models: Array.prototype.map.call(item.querySelectorAll("a[data-query]"), function (a) {
          return { title: a.textContent, query: a.getAttribute("data-query") };
        })
      };
    });
  }

  function start() {
    root = document.getElementById("calculator");
    if (!root || typeof BigInt === "undefined") { return; }
    families = readFamilies();
    if (!families.length) { return; }
    S = json(root, "data-strings", {});
    reading = json(root, "data-reading", {});
    answers = { titles: json(root, "data-errata-titles", {}), printed: json(root, "data-printed", []), errata: root.getAttribute("data-errata") };
    var params = new URLSearchParams(window.location.search);
    var first = familyEntry(params.get("family")) || familyEntry(root.getAttribute("data-first")) || families[0];
    // The form is drawn once the first family's formulas are in, all at once: nothing on screen moves.
    var draw = function () { buildShell(); root.classList.add("calc-ready"); applyAddress(params, true); };
    // Back and forward (and a script that sets the address) show the configuration the address names.
    window.addEventListener("popstate", function () { applyAddress(new URLSearchParams(window.location.search), true); });
    load(first.name).then(draw, draw);
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
