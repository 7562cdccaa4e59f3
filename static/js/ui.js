// Every page: the theme choice, the phone menu and conversation drawer, Escape and outside
// clicks closing menus, and the Copy buttons of code blocks and replies.
(function () {
  "use strict";

  const root = document.documentElement;
  const dark = window.matchMedia("(prefers-color-scheme: dark)");

  // -- theme: follows the system until chosen; the choice is remembered --------------------
  // The choice: System, Light or Dark; System says which one the system gives now.
  function showTheme() {
    const system = dark.matches ? "dark" : "light";
    document.querySelectorAll("[data-theme-choice]").forEach((select) => {
      select.value = root.dataset.theme || "";
      select.options[0].textContent = `System (${system})`;
    });
  }
  function remember(value) { // the server sets data-theme from it on the next page
    const secure = location.protocol === "https:" ? "; Secure" : "";
    const age = value ? 365 * 24 * 3600 : 0;
    document.cookie = `theme=${value}; path=/; max-age=${age}; SameSite=Lax${secure}`;
  }
  function chooseTheme(value) {
    remember(value); // "" follows the system again
    if (value) root.dataset.theme = value;
    else delete root.dataset.theme;
    showTheme();
  }
  dark.addEventListener("change", showTheme);
  document.addEventListener("change", (event) => {
    if (event.target.matches("[data-theme-choice]")) chooseTheme(event.target.value);
  });

  // -- a time zone not chosen yet: the browser's is proposed (saved only with its form) ----
  document.querySelectorAll("select[data-zone-from-browser]").forEach((select) => {
    if (select.value) return;
    let zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
    if (!Array.from(select.options).some((option) => option.value === zone)) return;
    select.value = zone;
    const note = document.createElement("span");
    note.className = "helptext zone-proposed";
    note.textContent = `Proposed from your browser: save to keep it.`;
    select.insertAdjacentElement("afterend", note);
  });

  // -- confirmations: the page's own dialog, not the browser's confirm() -------------------
  // Every hx-confirm asks here. The asking element may name its button (data-confirm-button,
  // red with data-confirm-danger) and the notice shown once it is done (data-done).
  let confirmDialog = null;
  function confirmBox() {
    if (confirmDialog) return confirmDialog;
    confirmDialog = document.createElement("dialog");
    confirmDialog.className = "confirm-dialog";
    confirmDialog.setAttribute("aria-labelledby", "confirm-question");
    confirmDialog.innerHTML = '<form method="dialog"><p id="confirm-question"></p>' +
      '<div class="confirm-actions"><button type="submit" value="cancel" class="secondary" autofocus>Cancel</button>' +
      '<button type="submit" value="ok" class="confirm-ok"></button></div></form>';
    document.body.appendChild(confirmDialog);
    return confirmDialog;
  }
  document.addEventListener("htmx:confirm", (event) => {
    const question = event.detail.question;
    if (!question) return; // nothing to ask
    event.preventDefault();
    const asker = event.detail.elt.closest("[hx-confirm]") || event.detail.elt;
    const dialog = confirmBox();
    dialog.querySelector("#confirm-question").textContent = question;
    const ok = dialog.querySelector(".confirm-ok");
    ok.textContent = asker.dataset.confirmButton || "Confirm";
    ok.classList.toggle("danger", asker.hasAttribute("data-confirm-danger"));
    dialog.returnValue = "";
    dialog.addEventListener("close", () => {
      if (dialog.returnValue === "ok") event.detail.issueRequest(true);
    }, { once: true });
    dialog.showModal();
  });
  function notify(text) {
    let region = document.getElementById("page-notice");
    if (!region) {
      region = document.createElement("div");
      region.id = "page-notice";
      region.setAttribute("role", "status");
      document.body.appendChild(region);
    }
    region.textContent = text;
    region.classList.add("shown");
    clearTimeout(notify.timer);
    notify.timer = setTimeout(() => region.classList.remove("shown"), 4000);
  }
  const shown = document.querySelector("#page-notice.shown"); // the server's, after a redirect
  if (shown) notify.timer = setTimeout(() => shown.classList.remove("shown"), 6000);
  // Before the swap: the asking element may be inside what the answer replaces.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const elt = event.detail.requestConfig && event.detail.requestConfig.elt;
    const asker = elt && elt.closest && elt.closest("[data-done]");
    if (asker && !event.detail.isError) notify(asker.dataset.done);
  });

  // -- the phone's menu and conversation drawer ---------------------------------------------
  function setOpen(button, open) {
    const target = document.getElementById(button.getAttribute("aria-controls"));
    button.setAttribute("aria-expanded", open ? "true" : "false");
    if (target) target.classList.toggle("open", open);
  }
  function drawer(open) {
    const button = document.querySelector("[data-drawer-toggle]");
    if (!button) return;
    setOpen(button, open);
    document.body.classList.toggle("drawer-open", open);
    document.querySelectorAll(".drawer-backdrop").forEach((el) => { el.hidden = !open; });
    if (open) {
      const first = document.querySelector("#sidebar a, #sidebar button, #sidebar input");
      if (first) first.focus();
    }
  }
  // A <details> that is a section, not a menu (a project's group in the sidebar), says so
  // with data-section: neither a click elsewhere nor Escape closes it.
  const OPEN_MENUS = "details[open]:not([data-section])";
  function closeMenus(except) {
    document.querySelectorAll(OPEN_MENUS).forEach((details) => {
      if (details !== except && !details.contains(except)) details.open = false;
    });
  }

  // -- copy ------------------------------------------------------------------------------
  async function copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    const label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = label; }, 1500);
  }

  document.addEventListener("click", (event) => {
    const target = event.target;
    const nav = target.closest("[data-nav-toggle]");
    if (nav) { setOpen(nav, nav.getAttribute("aria-expanded") !== "true"); return; }
    if (target.closest("[data-drawer-toggle]")) { drawer(!document.body.classList.contains("drawer-open")); return; }
    if (target.closest("[data-drawer-close]")) { drawer(false); return; }
    const code = target.closest("button[data-copy]");
    if (code) {
      const block = code.closest(".code-block");
      const pre = block && block.querySelector("pre");
      if (pre) copy(pre.textContent, code);
      return;
    }
    const field = target.closest("button[data-copy-from]");
    if (field) {  // a link to share: the text of the field it names
      const source = document.querySelector(field.dataset.copyFrom);
      if (source) copy(source.value, field);
      return;
    }
    const reply = target.closest("button[data-copy-reply]");
    if (reply) {
      const content = reply.closest("article").querySelector(".content");
      if (content) copy(content.innerText.trim(), reply);
      return;
    }
    // A click outside an open menu closes it.
    closeMenus(target.closest("details"));
    const openNav = document.querySelector("[data-nav-toggle][aria-expanded=true]");
    if (openNav && !target.closest(".site-nav")) setOpen(openNav, false);
  });

  // Escape closes whatever is open: a menu, the phone menu, the drawer.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    const open = document.querySelector(OPEN_MENUS);
    if (open) {
      const inner = [...document.querySelectorAll(OPEN_MENUS)].pop();
      inner.open = false;
      const summary = inner.querySelector("summary");
      if (summary) summary.focus();
      return;
    }
    const openNav = document.querySelector("[data-nav-toggle][aria-expanded=true]");
    if (openNav) { setOpen(openNav, false); openNav.focus(); return; }
    if (document.body.classList.contains("drawer-open")) {
      drawer(false);
      const button = document.querySelector("[data-drawer-toggle]");
      if (button) button.focus();
    }
  });

  // The drawer closes once a conversation is chosen.
  document.addEventListener("click", (event) => {
    if (event.target.closest("#sidebar a.conversation-link")) drawer(false);
  });

  // A table or code block wider than its box scrolls inside it: keyboard users can reach it
  // too (tabindex). Measured when the browser is idle after the page or a change is shown:
  // the layout is done by then, so reading the sizes forces none (at load, with 50 code
  // blocks, reading them forced a layout of the whole conversation before it could paint).
  function scrollables() {
    const boxes = [...document.querySelectorAll("table, .code-block pre")];
    const scrolling = boxes.map((box) => box.scrollWidth > box.clientWidth + 1); // read all,
    boxes.forEach((box, i) => { // then write
      if (scrolling[i] && !box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
      else if (!scrolling[i] && box.getAttribute("tabindex") === "0") box.removeAttribute("tabindex");
    });
  }
  const idle = window.requestIdleCallback || ((work) => setTimeout(work, 50));
  let queued = false;
  function later() {
    if (queued) return;
    queued = true;
    idle(() => { queued = false; scrollables(); }, { timeout: 1000 });
  }
  window.addEventListener("resize", later);
  document.addEventListener("htmx:afterSettle", later);
  document.addEventListener("chat:changed", later);
  later();

  showTheme();
})();
