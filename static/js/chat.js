// The chat page's websocket client. Frames are documented in docs/protocol.md.
// Every piece of message markup comes from the server (templates/chat/_message.html, sent
// in the frames as "article"); a streaming reply's Markdown comes rendered and sanitised by
// the server too ("html" + "tail"). This script only swaps them in.
(function () {
  "use strict";

  const section = document.getElementById("conversation");
  if (!section) return;
  const messages = document.getElementById("messages");
  const form = document.getElementById("composer");
  const input = document.getElementById("message-input");
  const sendButton = document.getElementById("send-button");
  const errorBox = document.getElementById("composer-error");
  const statusBox = document.getElementById("connection-status");
  const countBox = document.getElementById("char-count");
  const editingBox = document.getElementById("composer-editing");
  const maxChars = parseInt(section.dataset.maxChars || "0", 10);
  const QUIET_MS = 8000;
  // Made on first use: building an Intl.NumberFormat takes 20-40 ms, not worth it at load.
  let numberFormat = null;
  const numbers = { format: (n) => (numberFormat ||= new Intl.NumberFormat()).format(n) };

  let conversationId = section.dataset.conversationId || "";
  let socket = null;
  let pending = null; // the frame sent and not yet confirmed stored
  let retryDelay = 500;
  let streamingId = null;
  let quietTimer = null; // asks the server about a reply we stop hearing of
  let closedForGood = false;
  let editing = null; // id of the user message being edited
  let knownTitle = null; // the last title frame's: a header fetched before it must not undo it
  let knownContext = null; // the last reply's context figures, for the same reason
  const streams = new Map(); // reply id -> {stable, tail}: its rendered HTML so far

  function csrfToken() {
    const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    const headers = document.body.getAttribute("hx-headers");
    try { return JSON.parse(headers)["x-csrftoken"]; } catch (e) { return ""; }
  }

  function newClientId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = !text;
  }

  function setStatus(text) { statusBox.textContent = text; }

  function nearBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 120;
  }

  function scrollDown(force) {
    if (force || nearBottom()) messages.scrollTop = messages.scrollHeight;
  }

  function findArticle(id) {
    return messages.querySelector(`article[data-id="${id}"]`);
  }

  // Put the server's article for a message in the page: in place of the one it replaces,
  // or at the end.
  function place(html, id) {
    const holder = document.createElement("template");
    holder.innerHTML = html.trim();
    const node = holder.content.firstElementChild;
    if (!node) return null;
    const old = findArticle(id);
    if (old) old.replaceWith(node);
    else {
      const empty = document.getElementById("empty-state");
      if (empty) empty.remove();
      messages.appendChild(node);
    }
    if (window.htmx) htmx.process(node);
    markLast();
    document.dispatchEvent(new Event("chat:changed"));
    return node;
  }

  // Edit goes with every question (an earlier one starts a new branch: branches below),
  // Regenerate with the last reply (the server checks); neither while a reply streams.
  function markLast() {
    const users = messages.querySelectorAll('article[data-role="user"]');
    const replies = messages.querySelectorAll('article[data-role="assistant"]');
    const lastUser = users[users.length - 1];
    const lastReply = replies[replies.length - 1];
    messages.querySelectorAll("[data-edit]").forEach((button) => {
      button.hidden = streamingId !== null;
    });
    messages.querySelectorAll("[data-regenerate]").forEach((button) => {
      button.hidden = streamingId !== null || !lastReply || !lastReply.contains(button);
    });
  }

  function setStreaming(id) {
    // A new reply while an earlier one still shows as streaming: that one's end was lost
    // on the way (another tab's reply, on a busy channel layer); ask where it stands.
    if (streamingId !== null && id !== null && id !== streamingId) {
      transmit({ type: "sync", reply_id: streamingId });
    }
    streamingId = id;
    // While a reply streams, Send is Stop (and Enter sends nothing).
    if (id === null) {
      sendButton.textContent = "Send";
      sendButton.type = "submit";
      sendButton.classList.remove("stop");
    } else {
      sendButton.textContent = "Stop";
      sendButton.type = "button";
      sendButton.classList.add("stop");
    }
    markLast();
    watchQuiet();
  }

  // A reply streaming in another tab reaches this one through the server's channel layer,
  // which may drop frames when busy: after a quiet spell, ask for the reply's state.
  function watchQuiet() {
    clearTimeout(quietTimer);
    if (streamingId === null) return;
    quietTimer = setTimeout(() => {
      transmit({ type: "sync", reply_id: streamingId });
      watchQuiet();
    }, QUIET_MS);
  }

  function showStream(id) {
    const node = findArticle(id);
    const stream = streams.get(id);
    if (!node || !stream) return;
    const thinking = node.querySelector(".thinking");
    if (thinking && (stream.stable || stream.tail)) thinking.remove();
    node.querySelector(".content").innerHTML = stream.stable + stream.tail; // sanitised (nh3)
  }

  function updateMeter(ctx) {
    const meter = document.getElementById("context-meter");
    if (!meter || !ctx || ctx.used == null) return;
    meter.hidden = false;
    const bar = meter.querySelector("meter");
    bar.max = ctx.limit || 1;
    bar.value = ctx.used;
    meter.querySelector(".used").textContent = numbers.format(ctx.used);
    meter.querySelector(".limit").textContent = numbers.format(ctx.limit);
    const estimated = meter.querySelector(".estimated");
    if (estimated) estimated.hidden = !ctx.estimated;
  }

  function stopEditing() {
    editing = null;
    editingBox.hidden = true;
  }

  const handlers = {
    ready(frame) {
      setStatus("");
      retryDelay = 500;
      // A reply the page shows as streaming may have ended between the page's load (or the
      // socket's drop) and this connection: its end reached no tab here, so ask for it.
      for (const node of messages.querySelectorAll("article.status-streaming")) {
        const id = Number(node.dataset.id);
        if (id !== frame.streaming) transmit({ type: "sync", reply_id: id });
      }
      setStreaming(frame.streaming);
      if (pending) transmit(pending);
    },
    user_message(frame) {
      place(frame.article, frame.id);
      const mine = pending && (
        (pending.type === "send" && frame.client_id === pending.client_id) ||
        (pending.type === "edit" && frame.id === pending.message_id));
      if (mine) {
        pending = null;
        setInput("");
        stopEditing();
        showError("");
      }
      scrollDown(true);
    },
    reply_start(frame) {
      place(frame.article, frame.id);
      streams.set(frame.id, { stable: "", tail: "", seq: 0 });
      setStreaming(frame.id);
      scrollDown(true);
    },
    resume(frame) {
      // A reply that was streaming when this tab opened: its text so far, then the chunks
      // after frame.seq (or snapshots, from another server process).
      if (!findArticle(frame.id)) place(frame.article, frame.id);
      streams.set(frame.id, { stable: frame.html, tail: frame.tail, seq: frame.seq });
      // seq 0: nothing sent yet (a Continue's article already shows its text).
      if (frame.seq > 0) showStream(frame.id);
      if (streamingId !== frame.id) setStreaming(frame.id);
      else watchQuiet();
      scrollDown(false);
    },
    chunk(frame) {
      watchQuiet();
      const stream = streams.get(frame.id) || { stable: "", tail: "", seq: 0 };
      if (frame.seq <= stream.seq) return; // the resume had it
      stream.seq = frame.seq;
      stream.stable += frame.html;
      stream.tail = frame.tail;
      streams.set(frame.id, stream);
      showStream(frame.id);
      scrollDown(false);
    },
    snapshot(frame) {
      // A reply streaming in another server process: the whole of it so far, a few times a
      // second (older than what this tab shows: skipped).
      const known = streams.get(frame.id);
      if (known && frame.seq != null && frame.seq < known.seq) return;
      streams.set(frame.id, { stable: frame.html, tail: "", seq: frame.seq ?? (known ? known.seq : 0) });
      showStream(frame.id);
      if (streamingId !== frame.id) setStreaming(frame.id);
      else watchQuiet();
      scrollDown(false);
    },
    reply_end(frame) {
      streams.delete(frame.id);
      if (streamingId === frame.id) streamingId = null;
      place(frame.article, frame.id);
      if (streamingId === null) setStreaming(null);
      knownContext = frame.context || knownContext;
      updateMeter(frame.context);
      scrollDown(false);
    },
    title(frame) {
      knownTitle = frame.title;
      showTitle();
      refreshSidebar();
    },
    memory_elsewhere(frame) {
      // A notice of another conversation: a dismissable note, newest last, three at most.
      let region = document.getElementById("memory-toasts");
      if (!region) {
        region = document.createElement("div");
        region.id = "memory-toasts";
        region.setAttribute("role", "status");
        region.setAttribute("aria-live", "polite");
        document.body.appendChild(region);
      }
      const holder = document.createElement("template");
      holder.innerHTML = frame.html.trim();
      const node = holder.content.firstElementChild;
      if (!node) return;
      const old = region.querySelector(`.memory-toast[data-event="${frame.id}"]`);
      if (old) old.replaceWith(node);
      else region.appendChild(node);
      while (region.children.length > 3) region.firstElementChild.remove();
      node.querySelector(".toast-close")?.addEventListener("click", () => node.remove());
    },
    memory_event(frame) {
      // "Remembered: ..." under a message: new, or changed (undone, an item kept).
      const holder = document.createElement("template");
      holder.innerHTML = frame.html.trim();
      const node = holder.content.firstElementChild;
      if (!node) return;
      const old = messages.querySelector(`.memory-notice[data-event="${frame.id}"]`);
      if (old) old.replaceWith(node);
      else {
        let box = messages.querySelector(`.memory-notices[data-for="${frame.message_id}"]`);
        if (!box) {
          const article = findArticle(frame.message_id);
          if (!article) return; // not on this page (an older message)
          box = document.createElement("div");
          box.className = "memory-notices";
          box.dataset.for = frame.message_id;
          article.after(box);
        }
        box.appendChild(node);
      }
      if (window.htmx) htmx.process(node);
      showNotice(node);
    },
    branch_shown(frame) {
      showBranch(frame);
      if (frame.context && frame.context.used != null) {
        knownContext = frame.context;
        updateMeter(frame.context);
      }
      if (pending && pending.type === "edit" && pending.message_id === frame.replaces) {
        pending = null;
        showError("");
      }
    },
    error(frame) {
      showError(frame.message);
      if (pending && (!frame.client_id || frame.client_id === pending.client_id)) pending = null;
    },
  };

  // A new notice under the latest reply comes into view (the reader at the end sees it
  // whole); one under an older message, or while the reader is further up, does not move them.
  function showNotice(node) {
    const box = node.closest(".memory-notices");
    let later = box && box.nextElementSibling;
    while (later && !later.matches("article")) later = later.nextElementSibling;
    const fromEnd = messages.scrollHeight - messages.scrollTop - messages.clientHeight;
    if (!box || later || fromEnd - node.offsetHeight > 120) return;
    node.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function showTitle() {
    if (knownTitle === null) return;
    const heading = document.getElementById("conversation-title");
    if (heading) heading.textContent = knownTitle;
    document.title = `${knownTitle} · memorychat`;
  }

  function refreshSidebar() {
    if (!window.htmx) return;
    // Not under the user's hands: an open menu or a box being typed in would be lost.
    const list = document.getElementById("sidebar-list");
    if (list && (list.querySelector(".conversation-actions[open]") || list.contains(document.activeElement))) return;
    const search = document.getElementById("conversation-search");
    const archived = document.getElementById("archived-view");
    htmx.ajax("GET", location.pathname, {
      target: "#sidebar-list",
      swap: "outerHTML",
      values: { q: search ? search.value : "", archived: archived ? archived.value : "" },
    });
  }

  function transmit(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  function unavailable(text) {
    closedForGood = true;
    showError(text);
    input.disabled = true;
    sendButton.disabled = true;
    setStatus("");
  }

  function connect() {
    // A hidden branch shown for a link (data-preview): nothing goes on from this page.
    if (!conversationId || closedForGood || section.dataset.preview) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/chat/${conversationId}/`);
    socket.addEventListener("message", (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      const handler = handlers[frame.type];
      if (handler) handler(frame);
    });
    socket.addEventListener("close", (event) => {
      if (closedForGood) return;
      if (event.code === 4401) { // signed out (here or in another tab)
        closedForGood = true;
        location.assign("/accounts/login/?next=" + encodeURIComponent(location.pathname));
        return;
      }
      if (event.code === 4403) {
        unavailable("This conversation is not available: it was deleted, or it belongs to another account.");
        return;
      }
      if (event.code === 4429) {
        unavailable("Too many chat tabs are open: close some, then reload this page.");
        return;
      }
      if (event.code === 1009) { pending = null; showError("That was too large to send: the server closed the connection."); }
      setStatus("Reconnecting…");
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10000);
    });
  }

  async function startConversation() {
    const body = new URLSearchParams();
    if (section.dataset.temporary) body.append("temporary", "on");
    if (section.dataset.project) body.append("project", section.dataset.project);
    const model = document.getElementById("model-picker"); // the header's, when offered
    if (model && model.value) body.append("model", model.value);
    const response = await fetch(section.dataset.newUrl, {
      method: "POST",
      headers: {
        "X-CSRFToken": csrfToken(),
        Accept: "application/json",
        "Content-Type": "application/x-www-form-urlencoded",
      },
      credentials: "same-origin",
      body,
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    conversationId = String(data.id);
    section.dataset.conversationId = conversationId;
    history.pushState({}, "", data.url);
    connect();
    if (window.htmx) {
      // The new conversation's header: its Settings, its badges.
      // Rendered before the first message was stored: the title and meter that arrived in
      // the meantime are put back.
      htmx.ajax("GET", data.url, { target: "#conversation-header", swap: "outerHTML" }).then(() => {
        showTitle();
        if (knownContext) updateMeter(knownContext);
      });
    }
    // The sidebar follows with the title frame, once the first message gave it its title.
  }

  async function send() {
    if (streamingId !== null || closedForGood) return; // Stop is the button now
    const text = input.value;
    if (!text.trim()) { showError("The message is empty."); return; }
    if (maxChars && text.length > maxChars) {
      showError(`The message is too long (${numbers.format(text.length)} characters; the limit is ${numbers.format(maxChars)}).`);
      return;
    }
    if (pending) return; // one message at a time until the server confirms it
    showError("");
    if (editing !== null) {
      pending = { type: "edit", message_id: editing, text };
      if (!transmit(pending)) setStatus("Reconnecting… your message will be sent when the connection is back.");
      return;
    }
    pending = { type: "send", text, client_id: newClientId() };
    if (!conversationId) {
      try { await startConversation(); } catch (e) {
        console.error(e);
        pending = null;
        showError("Could not start a conversation. Your message is still here; try again.");
      }
      return; // the message goes out when the socket is ready
    }
    if (!transmit(pending)) {
      setStatus("Reconnecting… your message will be sent when the connection is back.");
    }
  }

  // The box's text set from here (sent, an edit, a suggestion) is announced as typing is,
  // so its listeners follow: the counter below, composer.js's growth.
  function setInput(text) {
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }

  // A counter near the limit; nothing is cut: an over-long message is refused with a reason.
  function updateCount() {
    if (!maxChars) return;
    const length = input.value.length;
    countBox.hidden = length < maxChars * 0.8;
    if (countBox.hidden) return;
    countBox.textContent = `${numbers.format(length)} / ${numbers.format(maxChars)}`;
    countBox.classList.toggle("over", length > maxChars);
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  sendButton.addEventListener("click", (event) => {
    if (streamingId === null) return; // a submit: the form handles it
    event.preventDefault();
    transmit({ type: "stop" });
  });
  input.addEventListener("keydown", (event) => {
    // On a touch screen Return makes a new line; the button sends (composer.js).
    const touch = window.memorychat && window.memorychat.touchTyping && window.memorychat.touchTyping();
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && !touch) {
      event.preventDefault();
      send();
    } else if (event.key === "Escape" && editing !== null) {
      setInput("");
      stopEditing();
    }
  });
  input.addEventListener("input", updateCount);
  document.getElementById("cancel-edit").addEventListener("click", () => {
    setInput("");
    stopEditing();
    input.focus();
  });
  messages.addEventListener("click", (event) => {
    const more = event.target.closest("button[data-continue]");
    if (more) {
      showError("");
      transmit({ type: "continue", message_id: parseInt(more.dataset.continue, 10) });
      return;
    }
    const retry = event.target.closest("button[data-retry]");
    if (retry) {
      showError("");
      transmit({ type: "retry", message_id: parseInt(retry.dataset.retry, 10) });
      return;
    }
    const regenerate = event.target.closest("button[data-regenerate]");
    if (regenerate) {
      showError("");
      transmit({ type: "regenerate", message_id: parseInt(regenerate.dataset.regenerate, 10) });
      return;
    }
    const branch = event.target.closest("button[data-branch]");
    if (branch) {
      showError("");
      transmit({ type: "switch_branch", message_id: parseInt(branch.dataset.branch, 10) });
      return;
    }
    const edit = event.target.closest("button[data-edit]");
    if (edit && !isLastQuestion(edit.closest("article"))) {
      editInPlace(edit.closest("article"));
      return;
    }
    if (edit) {
      editing = parseInt(edit.dataset.edit, 10);
      setInput(edit.closest("article").querySelector(".content").textContent);
      editingBox.hidden = false;
      input.focus();
      return;
    }
    const suggestion = event.target.closest("button[data-suggest]");
    if (suggestion) {
      setInput(suggestion.dataset.suggest);
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    }
  });

  // Branches. An earlier question is edited in place: sending starts a new branch from it
  // (the server's branch_shown frame swaps it in, in every tab); "‹ 1 / 2 ›" switches back.
  function isLastQuestion(article) {
    const users = messages.querySelectorAll('article[data-role="user"]');
    return article === users[users.length - 1];
  }

  function editInPlace(article) {
    if (article.querySelector(".inline-edit")) return;
    const content = article.querySelector(".content");
    const tools = article.querySelector(".message-tools");
    const form = document.createElement("form");
    form.className = "inline-edit";
    const box = document.createElement("textarea");
    box.value = content.textContent;
    box.rows = Math.min(8, Math.max(2, box.value.split("\n").length));
    box.setAttribute("aria-label", "Edit your message");
    const note = document.createElement("p");
    note.className = "inline-edit-note";
    note.textContent = "Sending starts a new branch from here; the messages after it stay in the old one.";
    const actions = document.createElement("div");
    actions.className = "inline-edit-actions";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "Cancel";
    const submit = document.createElement("button");
    submit.type = "submit";
    submit.className = "primary";
    submit.textContent = "Send";
    actions.append(cancel, submit);
    form.append(box, note, actions);
    const close = () => { form.remove(); content.hidden = false; if (tools) tools.hidden = false; };
    cancel.addEventListener("click", close);
    box.addEventListener("keydown", (event) => {
      if (event.key === "Escape") close();
      else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = box.value;
      if (!text.trim()) { showError("The message is empty."); return; }
      if (maxChars && text.length > maxChars) {
        showError(`The message is too long (${numbers.format(text.length)} characters; the limit is ${numbers.format(maxChars)}).`);
        return;
      }
      if (streamingId !== null) { showError("A reply is still being written. Stop it or wait for it to finish."); return; }
      showError("");
      pending = { type: "edit", message_id: parseInt(article.dataset.id, 10), text };
      if (!transmit(pending)) setStatus("Reconnecting… your message will be sent when the connection is back.");
    });
    content.hidden = true;
    if (tools) tools.hidden = true;
    content.after(form);
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  // The branch shown from a question on: its article and everything after it give way.
  function showBranch(frame) {
    const old = findArticle(frame.replaces);
    if (!old) { location.reload(); return; } // further up than this page loaded
    while (old.nextElementSibling) old.nextElementSibling.remove();
    old.remove();
    const holder = document.createElement("template");
    holder.innerHTML = frame.html.trim();
    const nodes = Array.from(holder.content.children);
    messages.append(...nodes);
    if (window.htmx) nodes.forEach((node) => htmx.process(node));
    markLast();
    document.dispatchEvent(new Event("chat:changed"));
    if (nodes[0]) nodes[0].scrollIntoView({ block: "nearest" });
  }

  // Undo of a "Remembered: ..." notice goes over the socket (every tab hears the result);
  // without a connection the form posts as it would without JavaScript.
  messages.addEventListener("submit", (event) => {
    const undo = event.target.closest("form[data-memory-undo]");
    if (!undo) return;
    if (transmit({ type: "memory_undo", event_id: parseInt(undo.dataset.memoryUndo, 10) })) {
      event.preventDefault();
      const button = undo.querySelector("button");
      if (button) button.disabled = true;
    } else if (!undo.querySelector("input[name=csrfmiddlewaretoken]")) {
      // A notice pushed over the socket was rendered without a request: the page's token.
      const token = document.createElement("input");
      token.type = "hidden";
      token.name = "csrfmiddlewaretoken";
      token.value = csrfToken();
      undo.appendChild(token);
    }
  });

  // A conversation's ⋯ menu in the sidebar: its panel (rename, archive, forget, delete) comes
  // as the text of a <noscript>, made into elements when the menu is first opened, before it
  // shows (click), or opened otherwise (toggle). A list htmx swapped in was parsed with
  // scripting off, so its <noscript> holds the panel's elements already: they are moved.
  function actionsPanel(details) {
    const source = details.querySelector(":scope > noscript");
    if (!source) return;
    let panel = source.querySelector(".actions-panel");
    if (!panel) {
      const holder = document.createElement("template");
      holder.innerHTML = source.textContent;
      panel = holder.content.querySelector(".actions-panel");
    }
    if (!panel) return;
    source.replaceWith(panel);
    if (window.htmx) htmx.process(panel);
  }
  const sidebar = document.getElementById("sidebar");
  if (sidebar) {
    sidebar.addEventListener("click", (event) => {
      const summary = event.target.closest(".conversation-actions > summary");
      if (summary) actionsPanel(summary.parentElement);
    }, true);
    sidebar.addEventListener("toggle", (event) => {
      if (event.target.open && event.target.matches(".conversation-actions")) actionsPanel(event.target);
      if (event.target.matches(".project-group > details")) rememberGroup(event.target);
    }, true);
  }

  // A project's group in the sidebar is open unless the user closed it: which ones they
  // closed is kept for the tab (sessionStorage), so a list swapped in or a new page keeps them.
  const CLOSED_KEY = "memorychat.closedProjects";
  function closedGroups() {
    try { return new Set(JSON.parse(sessionStorage.getItem(CLOSED_KEY) || "[]")); } catch (e) { return new Set(); }
  }
  function rememberGroup(details) {
    const id = details.parentElement.dataset.project;
    const closed = closedGroups();
    if (details.open) closed.delete(id); else closed.add(id);
    try { sessionStorage.setItem(CLOSED_KEY, JSON.stringify([...closed])); } catch (e) { /* private mode */ }
  }
  function closeGroups() {
    const closed = closedGroups();
    document.querySelectorAll(".project-group[data-project] > details[open]").forEach((details) => {
      // The group of the open conversation stays open.
      if (closed.has(details.parentElement.dataset.project) && !details.querySelector("li.current")) details.open = false;
    });
  }

  // A reply's "What the model saw" fetches its body when first opened (toggle does not
  // bubble, so the page listens in the capture phase): one listener rather than htmx's on
  // each report, whose attributes htmx's start would read, 25 and more, before the page
  // was ready.
  messages.addEventListener("toggle", (event) => {
    const details = event.target;
    if (!details.open || !details.matches("details.context-report[data-report-url]")) return;
    const body = details.querySelector(".report-body");
    const url = details.dataset.reportUrl;
    if (!body || details.dataset.reportAsked || !window.htmx) return;
    details.dataset.reportAsked = "1";
    htmx.ajax("GET", url, { source: details, target: body, swap: "innerHTML" });
  }, true);

  // "Load earlier messages" keeps the reader where they were: the older batch goes above.
  let keptFromBottom = null;
  document.body.addEventListener("htmx:beforeSwap", (event) => {
    const elt = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (elt && elt.classList && elt.classList.contains("load-earlier")) {
      keptFromBottom = messages.scrollHeight - messages.scrollTop;
    }
  });
  document.body.addEventListener("htmx:afterSwap", () => {
    markLast(); // first: the older batch's Edit buttons show, and take their room
    closeGroups();
    if (keptFromBottom !== null) {
      messages.scrollTop = messages.scrollHeight - keptFromBottom;
      keptFromBottom = null;
    }
  });
  window.addEventListener("popstate", () => location.reload());

  markLast();
  updateCount();
  closeGroups();
  // A link to a message (a memory's source: #m<id>) opens the page at it, not at the end.
  const linked = /^#m\d+$/.test(location.hash) && document.getElementById(location.hash.slice(1));
  if (linked) linked.scrollIntoView({ block: "center" });
  else scrollDown(true);
  connect();
})();
