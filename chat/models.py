import secrets
from collections.abc import Sequence

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from contextwindow.window import MemoryStrategy


class Conversation(models.Model):
    class Strategy(models.TextChoices):
        SLIDING_WINDOW = MemoryStrategy.SLIDING_WINDOW.value, "Sliding window"
        TOKEN_LIMIT = MemoryStrategy.TOKEN_LIMIT.value, "Token limit"
        SUMMARY_BUFFER = MemoryStrategy.SUMMARY_BUFFER.value, "Rolling summary"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )

    class TitleSource(models.TextChoices):
        NONE = "", "None yet"
        MESSAGE = "message", "The first message, until a title is made"
        GENERATED = "generated", "Made after the first exchange"
        USER = "user", "Chosen by the user"

    title = models.CharField(max_length=200, blank=True)
    # Who gave the title: a generated title replaces only the first message's stand-in,
    # never one the user chose (chat.titles).
    title_source = models.CharField(
        max_length=10, choices=TitleSource.choices, default=TitleSource.NONE, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    archived = models.BooleanField(default=False)
    # A temporary conversation reads and writes no long-term memory.
    temporary = models.BooleanField(default=False)
    strategy = models.CharField(
        max_length=20, choices=Strategy.choices, default=Strategy.SUMMARY_BUFFER
    )
    # Tokens per request; null means the default budget (settings.MEMORYCHAT_CONTEXT_BUDGET).
    context_budget = models.PositiveIntegerField(null=True, blank=True)
    # Blank means settings.OPENAI_MODEL.
    model = models.CharField(max_length=100, blank=True)
    # Pinned conversations lead the list, the most recently pinned first.
    pinned_at = models.DateTimeField(null=True, blank=True)
    # Null: outside any project. What is said here belongs to the project (projects.models).
    project = models.ForeignKey(
        "projects.Project",
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="conversations",
    )
    # /v1's shortcut to this conversation (``api.conversations``): the digest of its thread
    # as the client will send it back after its last /v1 turn, and that turn's reply (the
    # thread's last message then). Cleared whenever a message is stored or a reply ends.
    # Null when none (not ""): SQLite adds a nullable column in place, where a default would
    # remake the table under the memory index's triggers.
    api_digest = models.CharField(  # noqa: DJ001
        max_length=64, null=True, blank=True, editable=False
    )
    api_digest_tip = models.BigIntegerField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [
            models.Index(fields=["user", "archived", "-updated_at"], name="conv_user_recent"),
            models.Index(
                fields=["user", "api_digest"],
                name="conv_api_digest",
                condition=Q(api_digest__isnull=False),
            ),
        ]
        constraints = [
            # A temporary chat is never in a project (nothing of it is remembered, so it
            # would read a project's memory without ever adding to it): held by the
            # database, whatever path writes the row.
            models.CheckConstraint(
                condition=Q(temporary=False) | Q(project__isnull=True),
                name="conv_temporary_outside_projects",
            )
        ]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("chat:conversation", args=[self.pk])

    def clean(self) -> None:
        super().clean()
        if self.temporary and self.project_id is not None:
            raise ValidationError("A temporary conversation cannot be in a project.")

    @property
    def display_title(self) -> str:
        return self.title or "New conversation"

    @property
    def effective_model(self) -> str:
        return self.model or settings.OPENAI_MODEL

    @property
    def effective_budget(self) -> int:
        return self.context_budget or settings.MEMORYCHAT_CONTEXT_BUDGET


class Message(models.Model):
    class Role(models.TextChoices):
        SYSTEM = "system"
        USER = "user"
        ASSISTANT = "assistant"

    class Status(models.TextChoices):
        COMPLETE = "complete"
        STREAMING = "streaming"
        INTERRUPTED = "interrupted"
        TRUNCATED = "truncated", "Cut at the length limit"  # finish_reason "length": Continue
        FAILED = "failed"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Tokens of the content alone, counted once at write time with the conversation's model.
    token_count = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.COMPLETE)
    # Why a reply is interrupted or failed, in words the page shows.
    error = models.CharField(max_length=500, blank=True)
    # What kind of failure (llm.errors kinds: "refused" has no Retry), and what the model
    # server itself said (its status and error body): for staff, never shown to the user.
    error_kind = models.CharField(max_length=20, blank=True)
    upstream_detail = models.TextField(blank=True)
    model = models.CharField(max_length=100, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    time_to_first_token = models.FloatField(null=True, blank=True, help_text="seconds")
    duration = models.FloatField(null=True, blank=True, help_text="seconds")
    # Set by the browser on user messages so a resend after a reconnect is stored once.
    client_id = models.CharField(max_length=64, blank=True)
    # The user message an assistant reply answers.
    reply_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies"
    )
    # Branches (an earlier question edited): a question written in place of another points
    # at the first question of their group (its siblings, "1 / 2" on the page); a message of
    # a branch not shown points at the question that starts that branch (hidden_by), null
    # while shown. Every read of the conversation as it goes on (page, context, summary, the
    # memory index's triggers) takes only the rows whose hidden_by is null.
    branch_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    hidden_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # On a conversation's first question: the title generated for the branch it starts, so
    # that the title follows a switch between first questions (chat.branches.follow).
    branch_title = models.CharField(max_length=200, blank=True, default="")
    # The memory.SystemPrompt version this reply was generated with.
    system_prompt_version = models.PositiveIntegerField(null=True, blank=True)
    # While streaming: the time by which the streaming server must renew it (see services).
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # What the model saw for this reply: a memory.report.ContextReport (read it with
    # memory.report.report_read, which also reads reports stored before schema_version).
    context_report = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["conversation", "-created_at", "-id"], name="msg_conv_latest"),
            models.Index(fields=["status"], name="msg_status", condition=~Q(status="complete")),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "client_id"],
                condition=~Q(client_id=""),
                name="msg_unique_client_id",
            )
        ]

    # Earlier versions of a reply (ReplyVersion rows): the selectors that show messages
    # annotate it; the page says "2 / 2" from it. The version shown and the memory notices
    # under a message are set by the selectors too; the defaults spare the template a failed
    # lookup (which costs Django a dir() of the instance) for a message just stored.
    version_count = 0
    version_number: int | None = None
    version_question = ""  # the question an earlier version answered
    # A question's place among its group's questions (the selectors set them: "1 / 2").
    branch_count = 1
    branch_number = 1
    branch_previous: int | None = None  # the ids previous and next show
    branch_next: int | None = None
    # memory.selectors.Notice items, for the template (the models import nothing of memory)
    notices: Sequence[object] = ()

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @property
    def stopped(self) -> bool:
        """Stopped by the user (Stop), as opposed to cut by a closed tab or an error."""
        return self.status == self.Status.INTERRUPTED and self.error == STOPPED_BY_USER


# The error a reply keeps when the user pressed Stop: the page says "Stopped" for it.
STOPPED_BY_USER = "Stopped."


class ReplyVersion(models.Model):
    """An earlier version of a reply, kept when the reply is regenerated (or its question
    edited and sent again). The reply's Message row always holds the newest version, the one
    the conversation goes on from, so memory and context never see more than one."""

    reply = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()  # 1 is the first answer; the Message is the last
    question = models.TextField(blank=True)  # the user's text this version answered
    content = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=Message.Status.choices)
    error = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=100, blank=True)
    context_report = models.JSONField(null=True, blank=True)
    system_prompt_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["reply", "number"]
        constraints = [
            models.UniqueConstraint(fields=["reply", "number"], name="reply_version_unique")
        ]

    def __str__(self) -> str:
        return f"version {self.number} of reply {self.reply_id}"


class WorkerHeartbeat(models.Model):
    """The last time each background-job worker was seen (chat.jobs): the staff home and
    /healthz tell from it whether anything is draining the queue."""

    worker_id = models.CharField(max_length=64, unique=True)
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField(default=timezone.now)
    seen_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self):
        return f"worker {self.worker_id} (pid {self.pid}), seen {self.seen_at:%Y-%m-%d %H:%M:%S}"


def _share_token() -> str:
    return secrets.token_urlsafe(24)  # 192 bits: not guessable, not enumerable


class ConversationShare(models.Model):
    """A read-only link to a conversation as it was when shared: its messages up to
    ``through_message_id`` (chat.sharing). Revoking deletes it, and the link is a 404."""

    conversation = models.OneToOneField(
        Conversation, on_delete=models.CASCADE, related_name="share"
    )
    token = models.CharField(max_length=64, unique=True, default=_share_token)
    through_message_id = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"share of conversation {self.conversation_id}"

    def get_absolute_url(self) -> str:
        return reverse("chat:shared", args=[self.token])
