from django.urls import path

from chat import share_views, views

app_name = "chat"
urlpatterns = [
    path("", views.home, name="home"),
    path("c/new/", views.conversation_new, name="new"),
    path("search/", views.search, name="search"),
    path("sidebar/", views.sidebar_more, name="sidebar_page"),
    path("s/<str:token>/", share_views.shared, name="shared"),
    path("c/<int:conversation_id>/share/", share_views.share, name="share"),
    path("c/<int:conversation_id>/share/revoke/", share_views.share_revoke, name="share_revoke"),
    path("c/<int:conversation_id>/export/<str:fmt>/", share_views.export, name="export"),
    path("c/<int:conversation_id>/", views.conversation_detail, name="conversation"),
    path("c/<int:conversation_id>/history/", views.message_history, name="history"),
    path("c/<int:conversation_id>/rename/", views.conversation_rename, name="rename"),
    path("c/<int:conversation_id>/archive/", views.conversation_archive, name="archive"),
    path("c/<int:conversation_id>/pin/", views.conversation_pin, name="pin"),
    path("c/<int:conversation_id>/delete/", views.conversation_delete, name="delete"),
    path("c/<int:conversation_id>/settings/", views.conversation_settings, name="settings"),
    path("c/<int:conversation_id>/model/", views.conversation_model, name="model"),
    path(
        "c/<int:conversation_id>/m/<int:message_id>/version/<int:number>/",
        views.reply_version,
        name="reply_version",
    ),
    path(
        "c/<int:conversation_id>/m/<int:message_id>/keep-branch/",
        views.branch_keep,
        name="branch_keep",
    ),
    path(
        "c/<int:conversation_id>/m/<int:message_id>/report/",
        views.context_report,
        name="context_report",
    ),
]
