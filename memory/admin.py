"""Django admin for long-term memory (superusers; staff use the dashboard at /staff/).

The historied models use SimpleHistoryAdmin: their change pages link to a history with revert.
"""

from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from memory.models import ActionItem, Decision, Embedding, Fact, Summary, SummaryRun, SystemPrompt


@admin.register(SystemPrompt)
class SystemPromptAdmin(SimpleHistoryAdmin):
    list_display = ["version", "created_at", "created_by"]
    search_fields = ["text"]
    raw_id_fields = ["created_by"]
    list_select_related = ["created_by"]


@admin.register(Summary)
class SummaryAdmin(SimpleHistoryAdmin):
    list_display = [
        "conversation",
        "version",
        "is_current",
        "source",
        "message_count",
        "token_count",
        "model",
        "created_at",
    ]
    list_filter = ["is_current", "source"]
    search_fields = ["text", "conversation__title", "conversation__user__username"]
    raw_id_fields = ["conversation", "created_by"]
    list_select_related = ["conversation"]
    date_hierarchy = "created_at"


class MemoryAdmin(SimpleHistoryAdmin):
    raw_id_fields = ["user", "conversation"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["user"]
    list_per_page = 50
    show_full_result_count = False  # no COUNT(*) over every row for each page
    search_help_text = "Searches the text (substring) and the owner's username."

    def get_raw_id_fields(self, request):
        return [*self.raw_id_fields, "source_messages"]


@admin.register(Fact)
class FactAdmin(MemoryAdmin):
    list_display = ["text", "user", "category", "status", "pinned", "importance", "updated_at"]
    list_filter = ["status", "category", "pinned"]
    search_fields = ["text", "subject", "user__username"]
    raw_id_fields = ["user", "conversation", "superseded_by"]


@admin.register(Decision)
class DecisionAdmin(MemoryAdmin):
    list_display = ["what", "user", "status", "decided_at", "updated_at"]
    list_filter = ["status"]
    search_fields = ["what", "context", "rationale", "user__username"]


@admin.register(ActionItem)
class ActionItemAdmin(MemoryAdmin):
    list_display = ["what", "user", "owner", "due_date", "status", "updated_at"]
    list_filter = ["status"]
    search_fields = ["what", "owner", "user__username"]
    raw_id_fields = ["user", "conversation", "depends_on"]


@admin.register(SummaryRun)
class SummaryRunAdmin(admin.ModelAdmin):
    list_display = [
        "conversation",
        "mode",
        "source",
        "status",
        "progress",
        "attempts",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "mode", "source"]
    raw_id_fields = ["conversation", "requested_by", "summary"]
    readonly_fields = ["task_id", "created_at", "started_at", "finished_at"]
    list_select_related = ["conversation"]


@admin.register(Embedding)
class EmbeddingAdmin(admin.ModelAdmin):
    list_display = ["kind", "object_id", "user", "model", "created_at"]
    list_filter = ["kind", "model"]
    raw_id_fields = ["user"]
    exclude = ["vector"]
    readonly_fields = ["kind", "object_id", "model", "created_at"]
