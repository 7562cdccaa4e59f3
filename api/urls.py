from django.urls import path

from api import views

app_name = "api"
urlpatterns = [
    path("models", views.models, name="models"),
    path("chat/completions", views.chat_completions, name="chat_completions"),
]
