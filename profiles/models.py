from django.conf import settings
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.timezone import now
from simple_history.models import HistoricalRecords

from profiles.domains import DOMAIN_LABELS, LEVELS, OTHER
from profiles.style import METRICS, PRIORS

# Bounds on the free text a user writes into their own prompt block.
TERMINOLOGY_MAX_CHARS = 1000
CUSTOM_INSTRUCTIONS_MAX_CHARS = 1500
TOPICS_MAX = 20
TOPIC_MAX_CHARS = 60

_UNIT = [MinValueValidator(0.0), MaxValueValidator(1.0)]


class UserProfile(models.Model):
    """One per user: the communication style learned from their messages, and their preferences.

    The learned metrics are running averages (``profiles.style.blend``) updated by
    ``profiles.services.profile_observe_message`` with a queryset ``update()``, so they do not
    add a history row per message; every edit a person makes (preferences, the memory switch,
    a reset of the learned style) goes through ``save()`` and is kept by django-simple-history.
    """

    class ResponseFormat(models.TextChoices):
        BULLETS = "bullets", "Bullet points"
        PARAGRAPHS = "paragraphs", "Paragraphs"
        TABLES = "tables", "Tables where they help"

    class DetailLevel(models.TextChoices):
        BRIEF = "brief", "Brief"
        BALANCED = "balanced", "Balanced"
        COMPREHENSIVE = "comprehensive", "Comprehensive"

    class Tone(models.TextChoices):
        CASUAL = "casual", "Casual"
        NEUTRAL = "neutral", "Neutral"
        FORMAL = "formal", "Formal"

    class TechnicalDepth(models.TextChoices):
        BEGINNER = "beginner", "Beginner: plain language"
        INTERMEDIATE = "intermediate", "Intermediate"
        EXPERT = "expert", "Expert: skip the basics"

    class Emoji(models.TextChoices):
        USE = "use", "Welcome"
        AVOID = "avoid", "Avoid"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )

    # Learned style: each metric in 0..1 with the number of messages behind it.
    formality = models.FloatField(default=PRIORS["formality"], validators=_UNIT)
    formality_count = models.PositiveIntegerField(default=0)
    technical_level = models.FloatField(default=PRIORS["technical_level"], validators=_UNIT)
    technical_level_count = models.PositiveIntegerField(default=0)
    verbosity = models.FloatField(default=PRIORS["verbosity"], validators=_UNIT)
    verbosity_count = models.PositiveIntegerField(default=0)
    emoji_use = models.FloatField(default=PRIORS["emoji_use"], validators=_UNIT)
    emoji_use_count = models.PositiveIntegerField(default=0)
    humour = models.FloatField(default=PRIORS["humour"], validators=_UNIT)
    humour_count = models.PositiveIntegerField(default=0)
    # How often the user makes references of each kind (share of their messages).
    references_professional = models.FloatField(
        default=PRIORS["references_professional"], validators=_UNIT
    )
    references_professional_count = models.PositiveIntegerField(default=0)
    references_academic = models.FloatField(default=PRIORS["references_academic"], validators=_UNIT)
    references_academic_count = models.PositiveIntegerField(default=0)
    references_pop = models.FloatField(default=PRIORS["references_pop"], validators=_UNIT)
    references_pop_count = models.PositiveIntegerField(default=0)
    # The rhythm of the exchange: quick back-and-forth (0) or long considered messages (1).
    pace = models.FloatField(default=PRIORS["pace"], validators=_UNIT)
    pace_count = models.PositiveIntegerField(default=0)
    messages_observed = models.PositiveIntegerField(default=0)
    style_updated_at = models.DateTimeField(null=True, blank=True)

    # Preferences: blank means "no preference" (a learned metric may then apply).
    language = models.CharField(max_length=16, blank=True)
    timezone = models.CharField(max_length=64, blank=True)
    response_format = models.CharField(max_length=12, choices=ResponseFormat.choices, blank=True)
    detail_level = models.CharField(max_length=16, choices=DetailLevel.choices, blank=True)
    tone = models.CharField(max_length=12, choices=Tone.choices, blank=True)
    technical_depth = models.CharField(max_length=16, choices=TechnicalDepth.choices, blank=True)
    emoji = models.CharField(max_length=8, choices=Emoji.choices, blank=True)
    terminology = models.TextField(
        blank=True, validators=[MaxLengthValidator(TERMINOLOGY_MAX_CHARS)]
    )
    topics_of_interest = models.JSONField(default=list, blank=True)
    custom_instructions = models.TextField(
        blank=True, validators=[MaxLengthValidator(CUSTOM_INSTRUCTIONS_MAX_CHARS)]
    )

    class MemoryMode(models.TextChoices):
        AUTOMATIC = "automatic", "Automatic"
        ASK = "ask", "Ask first"
        OFF = "off", "Off"

    # The memory switch (it was a boolean, memory_enabled: on is "automatic"). "ask": new
    # memories wait as suggestions until the user keeps them.
    memory_mode = models.CharField(
        max_length=10,
        choices=MemoryMode.choices,
        default=MemoryMode.AUTOMATIC,
        help_text=(
            "Off: no long-term memory, nothing learned from messages, learned style unused. "
            "Ask first: new memories wait for the user's approval."
        ),
    )

    created_at = models.DateTimeField(default=now)
    updated_at = models.DateTimeField(default=now)

    history = HistoricalRecords()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(**{f"{name}__gte": 0.0}) & Q(**{f"{name}__lte": 1.0}),
                name=f"profile_{name}_unit",
            )
            for name in METRICS
        ]

    def __str__(self) -> str:
        return f"Profile of {self.user}"

    @property
    def memory_enabled(self) -> bool:
        """Memory is read and written (automatic or ask first); the rule for a conversation
        is ``memory.recall.memory_enabled``."""
        return self.memory_mode != self.MemoryMode.OFF

    def metric(self, name: str) -> tuple[float, int]:
        """A learned metric's value and the number of messages behind it."""
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r}")
        return getattr(self, name), getattr(self, f"{name}_count")


class StyleSnapshot(models.Model):
    """The learned style every ``SNAPSHOT_EVERY`` messages; at most ``SNAPSHOT_KEEP`` per profile.

    A metric with no message behind it yet is stored as null.
    """

    profile = models.ForeignKey(UserProfile, on_delete=models.CASCADE, related_name="snapshots")
    taken_at = models.DateTimeField(default=now)
    messages_observed = models.PositiveIntegerField()
    formality = models.FloatField(null=True, blank=True)
    technical_level = models.FloatField(null=True, blank=True)
    verbosity = models.FloatField(null=True, blank=True)
    emoji_use = models.FloatField(null=True, blank=True)
    humour = models.FloatField(null=True, blank=True)
    references_professional = models.FloatField(null=True, blank=True)
    references_academic = models.FloatField(null=True, blank=True)
    references_pop = models.FloatField(null=True, blank=True)
    pace = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["messages_observed", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "messages_observed"], name="snapshot_unique_per_count"
            )
        ]

    def __str__(self) -> str:
        return f"{self.profile.user} at {self.messages_observed} messages"


_LEVEL_CHOICES = [(level, level.capitalize()) for level in LEVELS]
_DOMAIN_CHOICES = [(slug, label) for slug, label in DOMAIN_LABELS.items() if slug != OTHER]


class DomainLevel(models.Model):
    """A user's proficiency in one domain (``profiles.domains``): the learned running score,
    the evidence behind it and the level it shows; a level the user set, which wins; or the
    domain hidden from learning (nothing learned, nothing said in the prompt).

    Learned values change with a queryset ``update()`` (no history row per message); the
    chart's history is ``DomainSnapshot``.
    """

    class Level(models.TextChoices):
        BEGINNER = "beginner", "Beginner"
        INTERMEDIATE = "intermediate", "Intermediate"
        EXPERT = "expert", "Expert"

    profile = models.ForeignKey(UserProfile, on_delete=models.CASCADE, related_name="domains")
    domain = models.CharField(max_length=20, choices=_DOMAIN_CHOICES)
    score = models.FloatField(default=0.5, validators=_UNIT)
    evidence = models.PositiveIntegerField(default=0)
    level = models.CharField(max_length=12, choices=Level.choices, blank=True)
    explicit_level = models.CharField(max_length=12, choices=Level.choices, blank=True)
    hidden = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=now)

    class Meta:
        ordering = ["domain"]
        constraints = [
            models.UniqueConstraint(fields=["profile", "domain"], name="domain_level_unique"),
            models.CheckConstraint(
                condition=Q(score__gte=0.0) & Q(score__lte=1.0), name="domain_level_score_unit"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.profile.user} in {self.domain}: {self.effective_level or 'unknown'}"

    @property
    def effective_level(self) -> str:
        """The level the prompt uses: the user's own, else the learned one ("" for none)."""
        if self.explicit_level:
            return self.explicit_level
        return "" if self.hidden else self.level


class DomainSnapshot(models.Model):
    """A domain's learned score and level at some evidence count: the learning-progress chart."""

    profile = models.ForeignKey(
        UserProfile, on_delete=models.CASCADE, related_name="domain_snapshots"
    )
    domain = models.CharField(max_length=20, choices=_DOMAIN_CHOICES)
    taken_at = models.DateTimeField(default=now)
    evidence = models.PositiveIntegerField()
    score = models.FloatField(validators=_UNIT)
    level = models.CharField(max_length=12, choices=DomainLevel.Level.choices, blank=True)

    class Meta:
        ordering = ["domain", "evidence", "id"]
        indexes = [models.Index(fields=["profile", "domain", "evidence"])]

    def __str__(self) -> str:
        return f"{self.profile.user} in {self.domain} at {self.evidence}"


class ApiKey(models.Model):
    """A personal key for the ``/v1`` API (``profiles.keys``): it acts as its user and opens
    nothing else. Only the secret's SHA-256 is kept; the secret is shown once, on creation.
    Each change (creation, revocation, by the user or by staff) is kept in its history;
    ``last_used_at`` is written with ``update()``, adding none."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)  # the secret's start, to tell keys apart
    secret_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    history = HistoricalRecords(excluded_fields=["last_used_at"])

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
