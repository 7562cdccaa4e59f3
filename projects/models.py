"""A project groups a user's conversations with their own instructions and their own memory.

What is learned or said in a project's conversations belongs to the project (the ``project``
field of conversations and memories); what is said outside any project reaches everywhere.
Conversations and memories refer to their project with RESTRICT: deleting a project must say
what becomes of them (``projects.services``), while deleting the account removes it all.
"""

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone

NAME_MAX = 100
DESCRIPTION_MAX = 2_000
INSTRUCTIONS_MAX = 4_000


class Project(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects"
    )
    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(blank=True, max_length=DESCRIPTION_MAX)
    # The user's text, quoted into the prompt of every conversation of the project.
    instructions = models.TextField(blank=True, max_length=INSTRUCTIONS_MAX)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint("user", Lower("name"), name="project_name_per_user"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("projects:detail", args=[self.pk])

    @property
    def archived(self) -> bool:
        return self.archived_at is not None
