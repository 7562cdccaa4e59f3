"""Django admin for conversations and messages (superusers; staff review at /staff/)."""

from django.contrib import admin
from django.db.models import Count

from chat.models import Conversation, Message


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "user",
        "message_count",
        "strategy",
        "temporary",
        "archived",
        "updated_at",
    ]
    list_filter = ["strategy", "temporary", "archived"]
    search_fields = ["title", "user__username"]
    raw_id_fields = ["user"]
    list_select_related = ["user"]
    date_hierarchy = "updated_at"
    show_full_result_count = False

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_message_count=Count("messages"))

    @admin.display(ordering="_message_count", description="messages")
    def message_count(self, obj) -> int:
        return obj._message_count


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["__str__", "conversation", "role", "status", "token_count", "created_at"]
    list_filter = ["role", "status"]
    search_fields = ["content"]
    raw_id_fields = ["conversation", "reply_to"]
    list_select_related = ["conversation"]
    readonly_fields = ["token_count", "created_at", "lease_expires_at"]
    show_full_result_count = False
