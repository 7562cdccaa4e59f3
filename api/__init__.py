"""The OpenAI-compatible ``/v1`` API: a personal key's user chats through the same turn as
the web page (``chat.turn.set_up_turn``, ``run_set_up_turn``), with memory.
docs/architecture.md ("The /v1 API")."""
