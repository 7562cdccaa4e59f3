// The Ctrl+K / ⌘K search palette (templates/chat/_palette.html): opens it, focuses its box,
// moves through the results with the arrow keys. htmx fetches the results; markup only from
// the server.
(() => {
  "use strict";
  const palette = document.getElementById("search-palette");
  if (!palette || typeof palette.showModal !== "function") return;
  const input = palette.querySelector("#palette-q");

  function open() {
    if (!palette.open) palette.showModal();
    input.focus();
    input.select();
  }

  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      open();
    }
  });
  document.addEventListener("click", (event) => {
    if (!event.target.closest("[data-palette-open]")) return;
    event.preventDefault();
    open();
  });
  palette.querySelector("[data-palette-close]").addEventListener("click", () => palette.close());
  // A click on the backdrop (the dialog itself, outside its box) closes it.
  palette.addEventListener("click", (event) => {
    if (event.target === palette) palette.close();
  });
  palette.addEventListener("keydown", (event) => {
    // Esc closes at once (in a search box it would first only clear the words).
    if (event.key === "Escape") {
      event.preventDefault();
      palette.close();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = [...palette.querySelectorAll("#palette-results a")];
    if (!links.length) return;
    event.preventDefault();
    const at = links.indexOf(document.activeElement);
    const next = event.key === "ArrowDown" ? at + 1 : at - 1;
    if (next < 0) input.focus();
    else links[Math.min(next, links.length - 1)].focus();
  });
})();
