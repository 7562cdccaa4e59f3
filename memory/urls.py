from django.urls import path

from memory import views

app_name = "memory"
urlpatterns = [
    path("", views.memory_page, name="page"),
    path("add/", views.memory_add, name="add"),
    path("events/<int:event_id>/undo/", views.event_undo, name="event_undo"),
    path("<str:kind>/<int:memory_id>/", views.memory_row, name="row"),
    path("<str:kind>/<int:memory_id>/edit/", views.memory_edit, name="edit"),
    path("<str:kind>/<int:memory_id>/pin/", views.memory_pin, name="pin"),
    path("<str:kind>/<int:memory_id>/done/", views.memory_done, name="done"),
    path("<str:kind>/<int:memory_id>/delete/", views.memory_delete, name="delete"),
    path("<str:kind>/<int:memory_id>/keep/", views.memory_keep, name="keep"),
    path("<str:kind>/<int:memory_id>/discard/", views.memory_discard, name="discard"),
    path("<str:kind>/<int:memory_id>/move/", views.memory_move, name="move"),
]
