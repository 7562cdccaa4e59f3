// Loaded in <head>, before the page paints: the theme the user chose in this browser, if
// any (otherwise the stylesheet follows the system's setting). ui.js has the toggle.
(function () {
  try {
    var theme = localStorage.getItem("theme");
    if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
  } catch (e) { /* storage blocked: follow the system */ }
})();
