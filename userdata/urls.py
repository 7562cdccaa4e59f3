from django.urls import path

from userdata import views

app_name = "userdata"
urlpatterns = [
    path("account/export/", views.data_export, name="export"),
    path("account/forget/", views.forget_everything, name="forget_everything"),
    path("account/delete/", views.account_delete, name="account_delete"),
    path("account/goodbye/", views.goodbye, name="goodbye"),
    path("account/import/", views.chat_import_view, name="chat_import"),
    path(
        "account/import/<int:import_id>/",
        views.chat_import_progress,
        name="chat_import_progress",
    ),
    path(
        "c/<int:conversation_id>/forget/",
        views.conversation_forget_view,
        name="forget_conversation",
    ),
]
