// The language switch links a page to its twin in the other edition. A deep link's anchor
// (#subtotals) is set on the switch as it is followed, so the twin opens at the same place.
// Without this script the switch still works: it opens the twin at its top.
document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a.language") : null;
  if (link) link.hash = location.hash;
});
