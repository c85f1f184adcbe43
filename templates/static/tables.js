// Sorting and filtering of a table of models grouped by family (index, compare); an enhancement only.
// The page already holds every row, grouped by family and ordered by total; this makes the form the
// template wrote (templates/_macros.html: table_tools; shown only with scripting on) reorder or hide
// rows. Its words are the template's, so it writes none of its own.
"use strict";
(function () {
  function setUp(form) {
    var table = document.getElementById(form.dataset.table);
    if (!table) return;
    var groups = Array.prototype.slice.call(table.tBodies);
    var rows = [];
    groups.forEach(function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        if (row.dataset.total) rows.push({ row: row, home: body, order: rows.length });
      });
    });
    var flat = document.createElement("tbody");
    flat.hidden = true;
    table.appendChild(flat);
    var compare = {
      total: function (a, b) { return num(a, "total") - num(b, "total") || a.order - b.order; },
      "-total": function (a, b) { return num(b, "total") - num(a, "total") || a.order - b.order; },
      size: function (a, b) { return num(a, "l") - num(b, "l") || num(a, "h") - num(b, "h") || num(a, "total") - num(b, "total"); },
      name: function (a, b) { return a.row.dataset.name.localeCompare(b.row.dataset.name, undefined, { numeric: true }); },
    };
    function num(entry, key) { return Number(entry.row.dataset[key]); }
    // A column of its own ("-flops": data-flops, largest first); rows without the figure go last.
    function byColumn(order) {
      var key = order.replace(/^-/, ""), sign = order.charAt(0) === "-" ? -1 : 1;
      return function (a, b) {
        var x = a.row.dataset[key], y = b.row.dataset[key];
        if (x === undefined || y === undefined) return (x === undefined) - (y === undefined) || a.order - b.order;
        return sign * (Number(x) - Number(y)) || a.order - b.order;
      };
    }
    function update() {
      var family = form.elements.family.value;
      var order = form.elements.order.value;
      var shown = rows.filter(function (e) { return !family || e.row.dataset.family === family; });
      rows.forEach(function (e) { e.row.hidden = shown.indexOf(e) < 0; });
      if (order === "family") {
        rows.forEach(function (e) { e.home.appendChild(e.row); });
        groups.forEach(function (body) { body.hidden = !!family && body.dataset.family !== family; });
        flat.hidden = true;
      } else {
        shown.slice().sort(compare[order] || byColumn(order)).forEach(function (e) { flat.appendChild(e.row); });
        groups.forEach(function (body) { body.hidden = true; });
        flat.hidden = false;
      }
      // Both values are numbers: a Chinese text's space beside each (U+E000, soft_space.py) stays a space.
      form.querySelector("output").textContent = form.dataset.count
        .replace("{shown}", shown.length).replace("{all}", rows.length).replace(/\ue000/g, " ");
    }
    form.addEventListener("change", update);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
  }
  document.querySelectorAll("form.table-tools").forEach(setUp);
})();
