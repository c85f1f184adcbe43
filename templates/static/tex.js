// Pages with formulas: a "TeX" button beside each formula copies its TeX source (the annotation its
// MathML carries), for notes written in LaTeX. An enhancement: without script the source is still in
// the page, and no button shows. style.css reserves each button's room, so nothing moves when it
// appears. The words come from this script's own element (data-label, data-copied).
"use strict";
(function () {
  var script = document.currentScript;
  if (!script) return;
  var label = script.dataset.label, copied = script.dataset.copied;
  var timer = 0;
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

  // Formulas written later (the calculator draws its own) get their button as well.
  function enhance() {
    document.querySelectorAll("span.math > math").forEach(function (math) {
      var span = math.parentNode;
      if (span.querySelector(".copy-tex") || source(math) === null) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-tex";
      button.textContent = "TeX";
      button.setAttribute("aria-label", label.replace("{formula}", math.getAttribute("alttext") || ""));
      // First in the span: after a formula that wraps (a flex row), the button would open a line of its own.
      span.insertBefore(button, math);
    });
  }

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
