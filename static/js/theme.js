// Loaded in <head>, before the page paints: the theme the user chose in this browser, if
// any (otherwise the stylesheet follows the system's setting). ui.js has the toggle.
// A cookie, not localStorage: a fresh page's first localStorage read can take tens of ms.
(function () {
  var match = document.cookie.match(/(?:^|; )theme=(dark|light)(?:;|$)/);
  if (match) document.documentElement.dataset.theme = match[1];
})();
