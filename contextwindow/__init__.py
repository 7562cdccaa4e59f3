"""The context-window library: exact token counts from shipped encodings and the
seed-compatible ``ConversationMemory``. Pure Python: imports nothing from Django."""
