from django.conf import settings
from django.db import models
from django.utils import timezone


class ImportProgress(models.Model):
    """How far a staff import of one export into one user has come (userdata.transfer.
    importer): each step is its own transaction, so an import stopped half-way (a restart, a
    database busy too long) is resumed by importing the same file again, from the next step,
    with the references already made. ``ids`` maps the document's references to row ids; it
    holds no user text."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64)  # sha256 of the document: the same file only
    steps_done = models.PositiveIntegerField(default=0)
    ids = models.JSONField(default=dict)
    counts = models.JSONField(default=dict)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "digest"], name="one_progress_per_import")
        ]

    def __str__(self):
        return f"import into user {self.user_id}: {self.steps_done} steps"
