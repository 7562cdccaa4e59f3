from django.urls import path

from staff.views import account, conversations, data, home, memories, projects, reports, users

app_name = "staff"
urlpatterns = [
    path("", home.home, name="home"),
    # users
    path("users/", users.user_list, name="users"),
    path("users/<int:user_id>/", users.user_detail, name="user"),
    path("users/<int:user_id>/preferences/", users.user_preferences, name="user_preferences"),
    path("users/<int:user_id>/style/", users.user_style, name="user_style"),
    path("users/<int:user_id>/password/", account.user_password, name="user_password"),
    path("users/<int:user_id>/reset-link/", account.user_reset_link, name="user_reset_link"),
    path(
        "users/<int:user_id>/keys/<int:key_id>/revoke/",
        users.user_key_revoke,
        name="user_key_revoke",
    ),
    path("users/<int:user_id>/export/", data.user_export, name="user_export"),
    path("users/<int:user_id>/delete-data/", data.user_data_delete_view, name="user_data_delete"),
    path("users/<int:user_id>/reports/<slug:report>/", reports.user_report, name="user_report"),
    path(
        "users/<int:user_id>/reports/<slug:report>/download/",
        reports.user_report_download,
        name="user_report_download",
    ),
    path("import/", data.data_import, name="import"),
    path(
        "projects/<int:project_id>/resummarise/",
        projects.project_resummarise,
        name="project_resummarise",
    ),
    # conversations and summaries
    path(
        "conversations/<int:conversation_id>/",
        conversations.conversation_detail,
        name="conversation",
    ),
    path(
        "conversations/<int:conversation_id>/resummarise/",
        conversations.conversation_resummarise,
        name="resummarise",
    ),
    path(
        "conversations/<int:conversation_id>/diff/",
        conversations.summary_diff,
        name="summary_diff",
    ),
    path(
        "conversations/<int:conversation_id>/reports/<slug:report>/",
        reports.conversation_report,
        name="conversation_report",
    ),
    path(
        "conversations/<int:conversation_id>/reports/<slug:report>/download/",
        reports.conversation_report_download,
        name="conversation_report_download",
    ),
    path(
        "summaries/<int:summary_id>/make-current/",
        conversations.summary_make_current,
        name="summary_make_current",
    ),
    path("runs/<int:run_id>/", conversations.summary_run_status, name="summary_run"),
    # memories
    path("memories/", memories.memory_list, name="memories"),
    path(
        "memories/<slug:kind>/bulk-delete/",
        memories.memory_bulk_delete,
        name="memory_bulk_delete",
    ),
    path("memories/<slug:kind>/<int:memory_id>/", memories.memory_row, name="memory_row"),
    path("memories/<slug:kind>/<int:memory_id>/edit/", memories.memory_edit, name="memory_edit"),
    path(
        "memories/<slug:kind>/<int:memory_id>/delete/",
        memories.memory_delete,
        name="memory_delete",
    ),
    path(
        "memories/<slug:kind>/<int:memory_id>/history/",
        memories.memory_history,
        name="memory_history",
    ),
    path(
        "memories/<slug:kind>/<int:memory_id>/history/<int:history_id>/restore/",
        memories.memory_restore,
        name="memory_restore",
    ),
    path("memories/fact/<int:memory_id>/pin/", memories.fact_pin, name="fact_pin"),
    path(
        "memories/fact/<int:memory_id>/supersede/",
        memories.fact_supersede,
        name="fact_supersede",
    ),
    path("changes/", memories.change_list, name="changes"),
]
