import logging

from django.apps import AppConfig

logger = logging.getLogger(__name__)


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat"

    def ready(self):
        from django.contrib.auth.signals import user_logged_out

        from chat.publisher import publish_memory_event
        from memory.signals import memory_event_changed

        user_logged_out.connect(close_sockets_on_logout, dispatch_uid="chat-logout")
        memory_event_changed.connect(publish_memory_event, dispatch_uid="chat-memory-events")


def close_sockets_on_logout(sender, request, user, **kwargs):
    """Signing out in one tab closes the chat sockets of every tab on that session (they
    were opened with it, and would otherwise go on working until reloaded)."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from chat import protocol

    session_key = getattr(getattr(request, "session", None), "session_key", None)
    layer = get_channel_layer()
    if not session_key or layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            protocol.session_group(session_key), protocol.group_signed_out()
        )
    except Exception:  # signing out must work even when the channel layer does not
        logger.warning("could not tell the chat sockets of a sign-out", exc_info=True)
