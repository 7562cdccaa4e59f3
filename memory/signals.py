"""What memory tells the rest of the project, without importing it: the chat layer connects
its publisher (``chat.publisher``) in its app's ``ready``."""

from django.dispatch import Signal

# A "Remembered: ..." notice was made or changed, and its transaction committed: every tab on
# its conversation is to show it as it now is. Sent with ``event_id``.
memory_event_changed = Signal()
