from django.urls import path

from projects import views

app_name = "projects"
urlpatterns = [
    path("", views.project_list, name="list"),
    path("new/", views.project_new, name="new"),
    path("<int:project_id>/", views.project_detail, name="detail"),
    path("<int:project_id>/edit/", views.project_edit, name="edit"),
    path("<int:project_id>/archive/", views.project_archive, name="archive"),
    path("<int:project_id>/delete/", views.project_delete, name="delete"),
    path("<int:project_id>/knowledge/", views.project_knowledge, name="knowledge"),
    path("<int:project_id>/forget/", views.project_forget, name="forget"),
    path("<int:project_id>/briefing.md", views.project_briefing_download, name="briefing"),
    path("move/<int:conversation_id>/", views.conversation_move, name="move"),
]
