from django.urls import path

from profiles import key_views, views

app_name = "profiles"
urlpatterns = [
    path("", views.profile, name="profile"),
    path("preferences/", views.preferences_update, name="preferences"),
    path("memory/", views.memory_update, name="memory"),
    path("domains/", views.domains_update, name="domains"),
    path("reset-style/", views.reset_style, name="reset_style"),
    path("email/", views.email_update, name="email"),
    path("email/confirm/<str:token>/", views.email_confirm, name="email_confirm"),
    path("keys/", key_views.key_new, name="keys"),
    path("keys/<int:key_id>/revoke/", key_views.key_revoke_view, name="key_revoke"),
]
