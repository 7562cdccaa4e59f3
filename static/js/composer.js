// The chat page's composer and reading position, beside chat.js (which owns the socket):
// the message box grows with its text up to half the screen; on a touch screen Return makes
// a new line and the button sends (chat.js asks `touchTyping`); the box is focused when a
// conversation opens (not on touch: the keyboard would cover the page); a "↓" button brings
// back the end of the conversation when the reader scrolled up.
(function () {
  "use strict";

  const input = document.getElementById("message-input");
  const messages = document.getElementById("messages");
  if (!input || !messages) return;
  const coarse = window.matchMedia("(pointer: coarse)");
  const NEAR_BOTTOM = 120; // px: what chat.js also counts as "at the end"

  // -- touch: Return is a new line --------------------------------------------------------
  window.memorychat = window.memorychat || {};
  window.memorychat.touchTyping = () => coarse.matches;
  const hint = document.getElementById("composer-hint");
  function showHint() {
    if (hint) hint.textContent = coarse.matches
      ? "Return adds a line; the button sends"
      : "Enter sends, Shift+Enter adds a line";
  }
  if (coarse.matches) input.setAttribute("enterkeyhint", "enter");
  coarse.addEventListener("change", showHint);
  showHint();

  // -- growth -----------------------------------------------------------------------------
  function grow() {
    const most = Math.round(window.innerHeight / 2);
    input.style.height = "auto";
    const wanted = input.scrollHeight + (input.offsetHeight - input.clientHeight);
    input.style.height = `${Math.min(wanted, most)}px`;
    input.style.overflowY = wanted > most ? "auto" : "hidden";
  }
  input.addEventListener("input", grow);
  window.addEventListener("resize", grow);
  // chat.js sends an input event when it sets the text (sent, a suggestion, an edit).
  grow();

  // -- focus on opening a conversation ----------------------------------------------------
  if (!coarse.matches && !input.disabled && !/^#m\d+$/.test(location.hash)) {
    input.focus({ preventScroll: true });
  }

  // -- the "↓" button ---------------------------------------------------------------------
  const down = document.getElementById("jump-to-end");
  const composer = document.getElementById("composer");
  if (!down) return;
  function atEnd() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight < NEAR_BOTTOM;
  }
  let queued = false;
  function showDown() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      down.hidden = atEnd();
      // Just above the composer, whose height follows its text.
      if (!down.hidden && composer) down.style.bottom = `${composer.offsetHeight + 12}px`;
    });
  }
  messages.addEventListener("scroll", showDown, { passive: true });
  // A reply growing below the reader (chunks, notices) moves the end away from them.
  new MutationObserver(showDown).observe(messages, { childList: true, subtree: true, characterData: true });
  window.addEventListener("resize", showDown);
  down.addEventListener("click", () => {
    messages.scrollTo({ top: messages.scrollHeight, behavior: "smooth" });
    down.hidden = true;
    if (!coarse.matches) input.focus({ preventScroll: true });
  });
  showDown();
})();
