from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from profiles.models import DomainLevel, StyleSnapshot, UserProfile
from profiles.style import METRICS

_SNAPSHOT_FIELDS = ("messages_observed", "taken_at", *METRICS)
_LEVEL_FIELDS = ("domain", "level", "score", "evidence", "explicit_level", "hidden", "updated_at")


class StyleSnapshotInline(admin.TabularInline):
    model = StyleSnapshot
    extra = 0
    can_delete = False
    fields = readonly_fields = _SNAPSHOT_FIELDS
    ordering = ["-messages_observed"]

    def has_add_permission(self, request, obj=None):
        return False


class DomainLevelInline(admin.TabularInline):
    """The level per subject, read only here: it is learned, or set by the user on their
    profile (profiles.expertise.domains_set)."""

    model = DomainLevel
    extra = 0
    can_delete = False
    fields = readonly_fields = _LEVEL_FIELDS

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(UserProfile)
class UserProfileAdmin(SimpleHistoryAdmin):
    list_display = [
        "user",
        "memory_mode",
        "messages_observed",
        *METRICS,
        "language",
        "detail_level",
        "updated_at",
    ]
    list_filter = ["memory_mode", "detail_level", "response_format", "language"]
    search_fields = ["user__username", "user__email"]
    list_select_related = ["user"]
    readonly_fields = [
        *(field for name in METRICS for field in (name, f"{name}_count")),
        "messages_observed",
        "style_updated_at",
        "created_at",
        "updated_at",
    ]
    raw_id_fields = ["user"]
    inlines = [DomainLevelInline, StyleSnapshotInline]
