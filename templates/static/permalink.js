// Model pages: a row's "#" link also copies its address (an enhancement; without script the link is
// the address to copy). The announcement's words come from the page (the .copied element's data-text).
"use strict";
(function () {
  var status = document.querySelector(".copied");
  if (!status || !navigator.clipboard) return;
  var timer = 0;
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.permalink");
    if (!link) return;
    navigator.clipboard.writeText(link.href).then(function () {
      status.textContent = status.dataset.text.replace("{address}", link.href);
      clearTimeout(timer);
      timer = setTimeout(function () { status.textContent = ""; }, 2500);
    }, function () {});
  });
})();
