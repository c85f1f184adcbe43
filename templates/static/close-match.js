// The near miss of an unknown config key, as `generator count` finds it: Python's
// difflib.get_close_matches(word, possibilities, n=1) with its default cutoff of 0.6
// (generator/cards/config.py). SequenceMatcher's ratio is worked out as CPython's difflib does,
// autojunk included, over code points; tests/browser/test_calculator_keys.py compares the two.
(function () {
  "use strict";

  // SequenceMatcher(None, a, b).find_longest_match(alo, ahi, blo, bhi), with no junk function.
  function longestMatch(a, b, b2j, alo, ahi, blo, bhi) {
    var besti = alo, bestj = blo, bestsize = 0, j2len = new Map();
    for (var i = alo; i < ahi; i++) {
      var next = new Map(), js = b2j.get(a[i]) || [];
      for (var n = 0; n < js.length; n++) {
        var j = js[n];
        if (j < blo) { continue; }
        if (j >= bhi) { break; }
        var k = (j2len.get(j - 1) || 0) + 1;
        next.set(j, k);
        if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
      }
      j2len = next;
    }
    // Popular elements of b (autojunk) are not in b2j, but a match grows over them.
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) { bestsize++; }
    return [besti, bestj, bestsize];
  }

  // SequenceMatcher(None, a, b).ratio(): twice the matched elements over both lengths.
  function ratio(first, second) {
    var a = Array.from(first), b = Array.from(second), b2j = new Map();
    b.forEach(function (elt, i) {
      if (!b2j.has(elt)) { b2j.set(elt, []); }
      b2j.get(elt).push(i);
    });
    if (b.length >= 200) {  // autojunk: an element in more than 1% of b (and one more) is popular
      var most = Math.floor(b.length / 100) + 1;
      Array.from(b2j.keys()).forEach(function (elt) { if (b2j.get(elt).length > most) { b2j.delete(elt); } });
    }
    var matched = 0, queue = [[0, a.length, 0, b.length]];
    while (queue.length) {
      var q = queue.pop(), m = longestMatch(a, b, b2j, q[0], q[1], q[2], q[3]);
      if (!m[2]) { continue; }
      matched += m[2];
      if (q[0] < m[0] && q[2] < m[1]) { queue.push([q[0], m[0], q[2], m[1]]); }
      if (m[0] + m[2] < q[1] && m[1] + m[2] < q[3]) { queue.push([m[0] + m[2], q[1], m[1] + m[2], q[3]]); }
    }
    var length = a.length + b.length;
    return length ? 2.0 * matched / length : 1.0;
  }

  // The best match of at least the cutoff, or null; of equal ratios, the greatest string (heapq.nlargest
  // on (ratio, candidate) pairs).
  function closeMatch(word, possibilities) {
    var best = null, score = -1;
    possibilities.forEach(function (x) {
      var r = ratio(x, word);
      if (r >= 0.6 && (r > score || (r === score && x > best))) { best = x; score = r; }
    });
    return best;
  }

  window.atlasCloseMatch = closeMatch;
})();
