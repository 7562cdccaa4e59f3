// The chat page's websocket client. Frames are documented in docs/protocol.md.
// Model text arrives as plain text while streaming (inserted with textContent) and as
// server-sanitised HTML when the reply is stored.
(function () {
  "use strict";

  const section = document.getElementById("conversation");
  if (!section) return;
  const messages = document.getElementById("messages");
  const form = document.getElementById("composer");
  const input = document.getElementById("message-input");
  const sendButton = document.getElementById("send-button");
  const stopButton = document.getElementById("stop-button");
  const errorBox = document.getElementById("composer-error");
  const statusBox = document.getElementById("connection-status");
  const maxChars = parseInt(section.dataset.maxChars || "0", 10);
  const QUIET_MS = 8000;

  let conversationId = section.dataset.conversationId || "";
  let socket = null;
  let pending = null; // {text, client_id}: sent, not yet confirmed stored
  let retryDelay = 500;
  let streamingId = null;
  let quietTimer = null; // asks the server about a reply we stop hearing of
  let closedForGood = false;

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

  function setStreaming(id) {
    // A new reply while an earlier one still shows as streaming: that one's end was lost
    // on the way (another tab's reply, on a busy channel layer); ask where it stands.
    if (streamingId !== null && id !== null && id !== streamingId) {
      transmit({ type: "sync", reply_id: streamingId });
    }
    streamingId = id;
    stopButton.hidden = id === null;
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

  function article(role, id) {
    let node = messages.querySelector(`article[data-id="${id}"]`);
    if (!node) {
      node = document.createElement("article");
      node.className = `message ${role}`;
      node.dataset.role = role;
      node.dataset.id = id;
      const content = document.createElement("div");
      content.className = role === "assistant" ? "content markdown" : "content";
      node.appendChild(content);
      messages.appendChild(node);
    }
    return node;
  }

  function setReplyStatus(node, frame) {
    node.querySelectorAll(".reply-status").forEach((el) => el.remove());
    node.className = `message assistant status-${frame.status}`;
    if (frame.status === "complete") return;
    const note = document.createElement("p");
    note.className = "reply-status";
    note.setAttribute("role", "status");
    const labels = { failed: "Failed: ", truncated: "Cut short: " };
    const label = labels[frame.status] || "Interrupted: ";
    note.textContent = label + (frame.error || "the reply did not finish.");
    if (frame.continue) {
      const more = document.createElement("button");
      more.type = "button";
      more.className = "continue";
      more.dataset.continue = frame.id;
      more.textContent = "Continue";
      note.appendChild(document.createTextNode(" "));
      note.appendChild(more);
    }
    // A request the server refused as it is would fail again: no Retry (frame.retry false).
    if (frame.reply_to && frame.retry !== false) {
      const retry = document.createElement("button");
      retry.type = "button";
      retry.className = "retry";
      retry.dataset.retry = frame.reply_to;
      retry.textContent = "Retry";
      note.appendChild(document.createTextNode(" "));
      note.appendChild(retry);
    }
    node.appendChild(note);
  }

  function updateMeter(ctx) {
    const meter = document.getElementById("context-meter");
    if (!meter || !ctx || ctx.used == null) return;
    meter.hidden = false;
    const bar = meter.querySelector("meter");
    bar.max = ctx.limit || 1;
    bar.value = ctx.used;
    meter.querySelector(".used").textContent = ctx.used;
    meter.querySelector(".limit").textContent = ctx.limit;
    const estimated = meter.querySelector(".estimated");
    if (estimated) estimated.hidden = !ctx.estimated;
  }

  const handlers = {
    ready(frame) {
      setStatus("");
      retryDelay = 500;
      setStreaming(frame.streaming);
      if (pending) transmit({ type: "send", text: pending.text, client_id: pending.client_id });
    },
    user_message(frame) {
      const node = article("user", frame.id);
      node.querySelector(".content").innerHTML = frame.html.replace(/\n/g, "<br>");
      if (pending && frame.client_id === pending.client_id) {
        pending = null;
        input.value = "";
        showError("");
      }
      scrollDown(true);
    },
    reply_start(frame) {
      const node = article("assistant", frame.id);
      node.dataset.replyTo = frame.reply_to;
      node.className = "message assistant status-streaming";
      node.querySelectorAll(".reply-status, .context-report").forEach((el) => el.remove());
      // A continued reply keeps its text so far; the chunks that follow append to it.
      node.querySelector(".content").textContent = frame.continues || "";
      setStreaming(frame.id);
      scrollDown(true);
    },
    chunk(frame) {
      watchQuiet();
      const node = article("assistant", frame.id);
      node.querySelector(".content").append(document.createTextNode(frame.text));
      scrollDown(false);
    },
    snapshot(frame) {
      // Another tab's reply: the whole text so far, a few times a second.
      const node = article("assistant", frame.id);
      node.className = "message assistant status-streaming";
      node.querySelector(".content").textContent = frame.text;
      if (streamingId !== frame.id) setStreaming(frame.id);
      else watchQuiet();
      scrollDown(false);
    },
    reply_end(frame) {
      const node = article("assistant", frame.id);
      node.querySelector(".content").innerHTML = frame.html; // sanitised by the server (nh3)
      setReplyStatus(node, frame);
      node.querySelectorAll(".context-report").forEach((el) => el.remove());
      if (frame.report_html) node.insertAdjacentHTML("beforeend", frame.report_html);
      if (streamingId === frame.id) setStreaming(null);
      updateMeter(frame.context);
      scrollDown(false);
    },
    title(frame) {
      document.getElementById("conversation-title").textContent = frame.title;
      document.title = `${frame.title} · memorychat`;
      refreshSidebar();
    },
    error(frame) {
      showError(frame.message);
      if (pending && (!frame.client_id || frame.client_id === pending.client_id)) pending = null;
    },
  };

  function refreshSidebar() {
    if (window.htmx) htmx.ajax("GET", location.pathname, { target: "#sidebar-list", swap: "outerHTML" });
  }

  function transmit(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  function connect() {
    if (!conversationId || closedForGood) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/chat/${conversationId}/`);
    socket.addEventListener("message", (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      const handler = handlers[frame.type];
      if (handler) handler(frame);
    });
    socket.addEventListener("close", (event) => {
      if (event.code === 4401) { closedForGood = true; location.assign("/accounts/login/?next=" + encodeURIComponent(location.pathname)); return; }
      if (event.code === 4403) { closedForGood = true; showError("This conversation is not available."); return; }
      if (event.code === 4429) { closedForGood = true; showError("Too many chat tabs are open: close some, then reload this page."); return; }
      if (event.code === 1009) { pending = null; showError("That was too large to send: the server closed the connection."); }
      setStatus("Reconnecting…");
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10000);
    });
  }

  async function startConversation() {
    const response = await fetch(section.dataset.newUrl, {
      method: "POST",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
      credentials: "same-origin",
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    conversationId = String(data.id);
    section.dataset.conversationId = conversationId;
    history.pushState({}, "", data.url);
    connect();
    refreshSidebar();
  }

  async function send() {
    const text = input.value;
    if (!text.trim()) { showError("The message is empty."); return; }
    if (maxChars && text.length > maxChars) {
      showError(`The message is too long (${text.length} characters; the limit is ${maxChars}).`);
      return;
    }
    if (pending) return; // one message at a time until the server confirms it
    showError("");
    pending = { text, client_id: newClientId() };
    if (!conversationId) {
      try { await startConversation(); } catch (e) {
        pending = null;
        showError("Could not start a conversation. Your message is still here; try again.");
      }
      return; // the message goes out when the socket is ready
    }
    if (!transmit({ type: "send", text, client_id: pending.client_id })) {
      setStatus("Reconnecting… your message will be sent when the connection is back.");
    }
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });
  stopButton.addEventListener("click", () => transmit({ type: "stop" }));
  messages.addEventListener("click", (event) => {
    const more = event.target.closest("button[data-continue]");
    if (more) {
      showError("");
      transmit({ type: "continue", message_id: parseInt(more.dataset.continue, 10) });
      return;
    }
    const button = event.target.closest("button[data-retry]");
    if (!button) return;
    showError("");
    transmit({ type: "retry", message_id: parseInt(button.dataset.retry, 10) });
  });
  window.addEventListener("popstate", () => location.reload());

  scrollDown(true);
  connect();
})();
