from django.urls import path

from userdata import views

app_name = "userdata"
urlpatterns = [
    path("account/export/", views.data_export, name="export"),
    path("account/forget/", views.forget_everything, name="forget_everything"),
    path("account/delete/", views.account_delete, name="account_delete"),
    path("account/goodbye/", views.goodbye, name="goodbye"),
    path(
        "c/<int:conversation_id>/forget/",
        views.conversation_forget_view,
        name="forget_conversation",
    ),
    path(
        "c/<int:conversation_id>/branch/<int:message_id>/forget/",
        views.branch_forget_view,
        name="forget_branch",
    ),
]
