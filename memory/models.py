"""Long-term memory: versioned summaries, decisions, action items, facts, system prompts."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from simple_history.models import HistoricalRecords


class SystemPrompt(models.Model):
    """The system prompt, versioned; each reply records the version it used."""

    version = models.PositiveIntegerField(unique=True)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["-version"]

    def __str__(self) -> str:
        return f"System prompt v{self.version}"


class Summary(models.Model):
    """One version of a conversation's rolling summary.

    A version covers every message of the conversation with an id up to ``covered_through``
    (message ids only grow, so the unsummarised tail is ``id > covered_through``). Exactly one
    version is current; a new one is swapped in atomically (see services.summary_create).
    """

    class Source(models.TextChoices):
        AUTO = "auto"
        STAFF = "staff"

    # The ``model`` of the blank version forgetting leaves (memory.services.forget): the
    # messages it covers are not summarised or recalled again.
    FORGOTTEN = "(forgotten by the user)"

    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="summaries"
    )
    version = models.PositiveIntegerField()
    text = models.TextField()
    topics = models.JSONField(default=list, blank=True)
    decisions = models.JSONField(default=list, blank=True)
    action_items = models.JSONField(default=list, blank=True)
    open_questions = models.JSONField(default=list, blank=True)
    # The id of the newest message this version covers (0: none).
    covered_through = models.BigIntegerField(default=0)
    message_count = models.PositiveIntegerField(default=0)
    token_count = models.PositiveIntegerField(default=0)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.AUTO)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    model = models.CharField(max_length=100, blank=True)
    is_current = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    history = HistoricalRecords()

    class Meta:
        ordering = ["conversation", "-version"]
        verbose_name_plural = "summaries"
        constraints = [
            models.UniqueConstraint(fields=["conversation", "version"], name="summary_version"),
            models.UniqueConstraint(
                fields=["conversation"], condition=Q(is_current=True), name="summary_one_current"
            ),
        ]

    def __str__(self) -> str:
        return f"Summary v{self.version} of conversation {self.conversation_id}"


class MemoryState(models.TextChoices):
    """Whose word a memory rests on. ``suggested`` ones wait for the user (memory mode "ask
    first"): never in the search index, never in a prompt. ``edited`` ones were changed by
    the user and ``added`` ones typed by them on the Memory page: like pinned facts, never
    touched by extraction again."""

    LEARNED = "learned", "Learned"
    SUGGESTED = "suggested", "Suggested"
    KEPT = "kept", "Kept by the user"
    EDITED = "edited", "Edited by the user"
    ADDED = "added", "Added by the user"


class MemoryItem(models.Model):
    """What all long-term memories share: an owner, where they came from, an audit trail."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        "chat.Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_messages = models.ManyToManyField("chat.Message", blank=True, related_name="+")
    # Null: the user's everywhere; otherwise recalled only in the project's conversations.
    project = models.ForeignKey(
        "projects.Project", null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    state = models.CharField(
        max_length=10, choices=MemoryState.choices, default=MemoryState.LEARNED
    )

    class Meta:
        abstract = True

    @property
    def protected(self) -> bool:
        """Extraction leaves it alone: the user typed it (or pinned it, for a fact)."""
        return self.state in (MemoryState.EDITED, MemoryState.ADDED) or getattr(
            self, "pinned", False
        )


def per_scope_keys(prefix: str) -> list[models.BaseConstraint]:
    """One decision (or action item) per user, scope and normalised text: the same one said in
    two projects is learned in each. Two partial constraints, as a null project (everywhere)
    is distinct from every other in a plain one."""
    return [
        models.UniqueConstraint(
            fields=["user", "dedupe_key"],
            condition=Q(project__isnull=True),
            name=f"{prefix}_key_everywhere",
        ),
        models.UniqueConstraint(
            fields=["user", "project", "dedupe_key"],
            condition=Q(project__isnull=False),
            name=f"{prefix}_key_in_project",
        ),
    ]


class Fact(MemoryItem):
    class Category(models.TextChoices):
        PREFERENCE = "preference"
        PERSONAL = "personal"
        PROJECT = "project"
        SCHEDULE = "schedule"
        TECHNICAL = "technical"
        OTHER = "other"

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUPERSEDED = "superseded"

    category = models.CharField(max_length=12, choices=Category.choices, default=Category.OTHER)
    # What the fact is about ("favourite colour", "project deadline"): facts with the same
    # subject and different text contradict each other, so the newer supersedes the older.
    subject = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    importance = models.FloatField(default=0.5)  # 0..1
    pinned = models.BooleanField(default=False)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    # Normalised text, for "the same fact told again".
    dedupe_key = models.CharField(max_length=255, blank=True)
    mentions = models.PositiveIntegerField(default=1)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["-pinned", "-importance", "-updated_at"]
        indexes = [
            models.Index(fields=["user", "status", "-updated_at"], name="fact_user_recent"),
            # The pinned facts every turn reads (memory.recall.pinned_facts) and a new
            # session's best facts (resume_items), in their order: without it each such read
            # sorted all of a user's active facts.
            models.Index(
                fields=["user", "status", "-pinned", "-importance", "-updated_at"],
                name="fact_user_pinned",
            ),
            models.Index(fields=["user", "subject"], name="fact_user_subject"),
            models.Index(fields=["user", "dedupe_key"], name="fact_user_key"),
            models.Index(fields=["category", "status"], name="fact_category"),
            models.Index(fields=["-updated_at", "-id"], name="fact_updated"),
            models.Index(fields=["user", "state", "-created_at"], name="fact_user_state"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Decision(MemoryItem):
    class Status(models.TextChoices):
        PROPOSED = "proposed"
        DECIDED = "decided"
        REVISITED = "revisited"
        REVERSED = "reversed"

    what = models.TextField()
    context = models.TextField(blank=True)
    rationale = models.TextField(blank=True)
    alternatives = models.JSONField(default=list, blank=True)
    stakeholders = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DECIDED)
    decided_at = models.DateTimeField(null=True, blank=True)
    dedupe_key = models.CharField(max_length=255)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["user", "status", "-updated_at"], name="decision_recent"),
            # A new session's recent decisions (memory.recall.resume_items), newest first
            # whatever their status: without it each new conversation sorted them all.
            models.Index(fields=["user", "-updated_at"], name="decision_user_updated"),
            models.Index(fields=["-updated_at", "-id"], name="decision_updated"),
            models.Index(fields=["user", "state", "-created_at"], name="decision_user_state"),
        ]
        constraints = per_scope_keys("decision")

    def __str__(self) -> str:
        return self.what[:80]


class ActionItem(MemoryItem):
    class Status(models.TextChoices):
        OPEN = "open"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done"
        CANCELLED = "cancelled"

    what = models.TextField()
    owner = models.CharField(max_length=200, blank=True)
    due_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN)
    depends_on = models.ManyToManyField(
        "self", symmetrical=False, blank=True, related_name="blocks"
    )
    dedupe_key = models.CharField(max_length=255)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["user", "status", "-updated_at"], name="action_recent"),
            models.Index(fields=["user", "due_date"], name="action_due"),
            models.Index(fields=["-updated_at", "-id"], name="action_updated"),
            models.Index(fields=["user", "state", "-created_at"], name="action_user_state"),
        ]
        constraints = per_scope_keys("action")

    def __str__(self) -> str:
        return self.what[:80]


# An action item still to do: what briefings list as open, reports check for overdue, and a new
# session or suggestion recalls.
OPEN_STATUSES = (ActionItem.Status.OPEN, ActionItem.Status.IN_PROGRESS)


# The kinds of memory a user keeps (each its own table, with its own Status choices).
KeptMemory = Fact | Decision | ActionItem


class MemoryEvent(models.Model):
    """What one extraction added or changed, shown under the reply it followed ("Remembered:
    ..."), with Undo. ``items`` is a list of ``memory.services.events.EventItem``; ``undone_at``
    is set once Undo ran."""

    class Source(models.TextChoices):
        TURN = "turn"  # the light extractor after a reply
        SUMMARY = "summary"  # a summary run's extraction

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    message = models.ForeignKey(
        "chat.Message", on_delete=models.CASCADE, related_name="memory_events"
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.TURN)
    items = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"memory event {self.pk} under message {self.message_id}"


class Embedding(models.Model):
    """A stored vector for one searchable item (memory.search.embeddings), per model."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20)
    object_id = models.BigIntegerField()
    model = models.CharField(max_length=100)
    vector = models.BinaryField()  # float32 array, L2-normalised
    created_at = models.DateTimeField(default=timezone.now)
    # The index row's scope when computed (memory.search.schema): its project's id, 0 for
    # everywhere. A row changing scope loses its vector (triggers), so this stays true.
    scope = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "object_id", "model"], name="embedding_unique")
        ]
        indexes = [models.Index(fields=["user", "model", "scope"], name="embedding_user_scope")]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} ({self.model})"


class SummaryRun(models.Model):
    """One background (re-)summarisation of a conversation: its state for the pages.

    ``incremental`` folds the unsummarised tail into the current summary; ``full`` rebuilds the
    summary from the first message. Either way the new version becomes current only when the
    run completes; a failure leaves the current one in place.
    """

    class Mode(models.TextChoices):
        INCREMENTAL = "incremental"
        FULL = "full"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="summary_runs"
    )
    mode = models.CharField(max_length=12, choices=Mode.choices, default=Mode.INCREMENTAL)
    source = models.CharField(
        max_length=10, choices=Summary.Source.choices, default=Summary.Source.AUTO
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)  # percent
    stage = models.CharField(max_length=100, blank=True)
    # Why an attempt failed; on a run that is done, what failed before the answer that was
    # used (a cut or invalid model answer, and the fallback taken).
    error = models.TextField(blank=True)
    # What answered: json_schema, json_object or offline (memory.summariser), "+"-joined when
    # the batches differed.
    method = models.CharField(max_length=40, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True)
    summary = models.ForeignKey(
        Summary, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    # Renewed at every progress step; a running run whose heartbeat stops lost its worker.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["conversation", "status"], name="summaryrun_state"),
            models.Index(fields=["status", "heartbeat_at"], name="summaryrun_heartbeat"),
        ]

    def __str__(self) -> str:
        return f"{self.mode} run {self.pk} of conversation {self.conversation_id}: {self.status}"

    @property
    def active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)
