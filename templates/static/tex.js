// Pages with formulas: a "TeX" button beside each formula copies its TeX source (the annotation its
// MathML carries), for notes written in LaTeX. An enhancement: without script the source is still in
// the page, and no button shows. style.css reserves each button's room, so nothing moves when it
// appears. The words come from this script's own element (data-label, data-copied, data-hint).
// One tab stop per table: Tab reaches a table's buttons once, and the arrow keys move between them
// (a roving tabindex), so a page of a hundred formulas costs the keyboard a stop per table.
"use strict";
(function () {
  var script = document.currentScript;
  if (!script) return;
  var label = script.dataset.label, copied = script.dataset.copied;
  var timer = 0;
  // The hint every button is described by: how to reach the other buttons of its table.
  var hint = document.createElement("span");
  hint.id = "copy-tex-hint";
  hint.hidden = true;
  hint.textContent = script.dataset.hint;
  document.body.appendChild(hint);
  // A model page's status line, which its permalinks use too; elsewhere one of the same kind, made now:
  // a live region made at the moment it speaks is not always heard.
  var status = document.querySelector(".copied");
  if (!status) {
    status = document.createElement("p");
    status.className = "copied";
    status.setAttribute("role", "status");
    document.body.appendChild(status);
  }

  function source(math) {
    var annotation = math && math.querySelector('annotation[encoding="application/x-tex"]');
    return annotation ? annotation.textContent : null;
  }

  // The buttons that share a tab stop: a table's, else those of one section (the calculator's).
  function groupOf(element) {
    return element.closest("table, section, main") || document.body;
  }

  function members(group) {
    return Array.prototype.filter.call(group.querySelectorAll("button.copy-tex"), function (button) {
      return groupOf(button) === group;
    });
  }

  // One button of a group in the tab order: the one focused last, else its first.
  function rove(group, current) {
    var buttons = members(group);
    var stop = current || buttons.filter(function (b) { return b.tabIndex === 0; })[0] || buttons[0];
    buttons.forEach(function (button) { button.tabIndex = button === stop ? 0 : -1; });
  }

  // Formulas written later (the calculator draws its own) get their button as well.
  function enhance() {
    var groups = [];
    document.querySelectorAll("span.math > math").forEach(function (math) {
      var span = math.parentNode;
      if (span.querySelector(".copy-tex") || source(math) === null) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-tex";
      button.textContent = "TeX";
      button.setAttribute("aria-label", label.replace("{formula}", math.getAttribute("alttext") || ""));
      button.setAttribute("aria-describedby", hint.id);
      button.tabIndex = -1;
      // First in the span: after a formula that wraps (a flex row), the button would open a line of its own.
      span.insertBefore(button, math);
      var group = groupOf(span);
      if (groups.indexOf(group) < 0) groups.push(group);
    });
    groups.forEach(function (group) { rove(group, null); });
  }

  // A button focused by the mouse or by script takes its group's tab stop: Tab comes back to it.
  document.addEventListener("focusin", function (event) {
    var button = event.target.closest && event.target.closest("button.copy-tex");
    if (button) rove(groupOf(button), button);
  });

  // Arrow keys, Home and End move between the buttons of one group, and take its tab stop along.
  var MOVES = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };
  document.addEventListener("keydown", function (event) {
    var button = event.target.closest && event.target.closest("button.copy-tex");
    if (!button || event.altKey || event.ctrlKey || event.metaKey) return;
    var buttons = members(groupOf(button)), at = buttons.indexOf(button), next = -1;
    if (event.key in MOVES) next = Math.min(Math.max(at + MOVES[event.key], 0), buttons.length - 1);
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = buttons.length - 1;
    if (next < 0) return;
    event.preventDefault();
    rove(groupOf(button), buttons[next]);
    buttons[next].focus();
  });

  function announce(text) {
    status.textContent = copied.replace("{tex}", text);
    clearTimeout(timer);
    timer = setTimeout(function () { status.textContent = ""; }, 2500);
  }

  // The clipboard API needs a secure context; elsewhere a selected text area is copied instead.
  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) { return navigator.clipboard.writeText(text); }
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "copy-source";
    document.body.appendChild(area);
    area.select();
    var done = document.execCommand("copy");
    area.remove();
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.copy-tex");
    if (!button) return;
    var text = source(button.parentNode.querySelector("math"));
    if (text !== null) { copy(text).then(function () { announce(text); }, function () {}); }
  });
  enhance();
  new MutationObserver(enhance).observe(document.body, { childList: true, subtree: true });
})();
