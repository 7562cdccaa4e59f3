from django.conf import settings
from django.db import models
from django.utils import timezone


class ImportProgress(models.Model):
    """How far a staff import of one export into one user has come (userdata.transfer.
    importer): each step is its own transaction, so an import stopped half-way (a restart, a
    database busy too long) is resumed by importing the same file again, from the next step,
    with the references already made. ``ids`` maps the document's references to row ids, and
    apart from them each row's place in the document ("conversations[3]"); it holds no user
    text."""

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


class ChatImport(models.Model):
    """A user's import of another assistant's conversations (ChatGPT, Claude), done by a job
    (``userdata.chat_import``): the file is read and checked whole when it is uploaded and its
    conversations kept here (``payload``, compressed) until the job has stored them, a chunk
    per transaction; then the memory is built from them a few conversations at a time."""

    class Source(models.TextChoices):
        CHATGPT = "chatgpt", "ChatGPT"
        CLAUDE = "claude", "Claude"

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting to start"
        IMPORTING = "importing", "Importing"
        BUILDING = "building", "Building the memory"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=10, choices=Source.choices)
    filename = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    payload = models.BinaryField(default=bytes)  # the checked conversations; emptied when stored
    total = models.PositiveIntegerField(default=0)  # conversations in the file (with messages)
    processed = models.PositiveIntegerField(default=0)  # of them, stored or found already there
    imported = models.PositiveIntegerField(default=0)  # new conversations
    messages = models.PositiveIntegerField(default=0)
    already = models.PositiveIntegerField(default=0)  # imported before: left as they are
    skipped_empty = models.PositiveIntegerField(default=0)
    memory_total = models.PositiveIntegerField(default=0)
    memory_done = models.PositiveIntegerField(default=0)
    memory_cursor = models.PositiveIntegerField(default=0)  # the last ImportedConversation built
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="chat_import_user_recent")]

    def __str__(self):
        return f"{self.get_source_display()} import #{self.pk} of user {self.user_id}"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


class ImportedConversation(models.Model):
    """Which conversation of an export became which conversation here: a second import of the
    same export finds it and leaves it alone. Deleting the conversation deletes this too (an
    import after that brings it back)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=10, choices=ChatImport.Source.choices)
    source_id = models.CharField(max_length=100)
    conversation = models.OneToOneField(
        "chat.Conversation", on_delete=models.CASCADE, related_name="imported_from"
    )
    chat_import = models.ForeignKey(
        ChatImport, null=True, on_delete=models.SET_NULL, related_name="conversations"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "source", "source_id"], name="one_conversation_per_source_id"
            )
        ]

    def __str__(self):
        return f"{self.source} {self.source_id} → conversation {self.conversation_id}"
