import re
import zoneinfo
from typing import cast

from django import forms

from profiles.choices import LANGUAGES, timezones
from profiles.domains import DOMAINS
from profiles.expertise import HIDDEN
from profiles.models import (
    CUSTOM_INSTRUCTIONS_MAX_CHARS,
    TERMINOLOGY_MAX_CHARS,
    TOPIC_MAX_CHARS,
    TOPICS_MAX,
    DomainLevel,
    UserProfile,
)
from profiles.services import PREFERENCE_FIELDS

_TOPIC_SPLIT_RE = re.compile(r"[,;\n]")
_SPACES_RE = re.compile(r"\s+")


def _normalise_text(value: str) -> str:
    """Unix newlines, no trailing spaces, no runs of blank lines."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in value.strip().split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


class PreferencesForm(forms.ModelForm):
    """The preferences a user edits on their profile page."""

    language = forms.ChoiceField(
        choices=[("", "Not set: the language I write in"), *LANGUAGES], required=False
    )
    timezone = forms.ChoiceField(label="Time zone", required=False)
    topics_of_interest = forms.CharField(
        required=False,
        max_length=TOPICS_MAX * (TOPIC_MAX_CHARS + 2),
        help_text=f"Separated by commas; at most {TOPICS_MAX}.",
        widget=forms.TextInput(attrs={"placeholder": "e.g. Django, sourdough, cycling"}),
    )

    class Meta:
        model = UserProfile
        fields = PREFERENCE_FIELDS
        labels = {
            "response_format": "Response format",
            "detail_level": "Level of detail",
            "technical_depth": "Technical depth",
            "terminology": "Terminology notes",
        }
        help_texts = {
            "detail_level": "Overrides the verbosity learned from your messages.",
            "tone": "Overrides the formality learned from your messages.",
            "technical_depth": "Overrides the technical level learned from your messages.",
            "emoji": "Overrides the emoji use learned from your messages.",
            "terminology": "Names and terms the assistant should use, e.g. “say PR, not MR”.",
            "custom_instructions": (
                "Passed to the assistant as your stated preferences, quoted; they cannot change "
                "its rules."
            ),
        }
        widgets = {
            "terminology": forms.Textarea(attrs={"rows": 3, "maxlength": TERMINOLOGY_MAX_CHARS}),
            "custom_instructions": forms.Textarea(
                attrs={"rows": 4, "maxlength": CUSTOM_INSTRUCTIONS_MAX_CHARS}
            ),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        zones = list(timezones())
        current = self.instance.timezone if self.instance else ""
        if current and current not in zones:  # an older alias stays until changed
            zones.append(current)
        zone_field = cast(forms.ChoiceField, self.fields["timezone"])
        zone_field.choices = [("", "Not set"), *((tz, tz) for tz in zones)]
        # Unset: static/js/ui.js proposes the browser's zone (saved only with the form).
        self.fields["timezone"].widget.attrs["data-zone-from-browser"] = ""
        for name in ("response_format", "detail_level", "tone", "technical_depth", "emoji"):
            # Every preference but the format overrides a metric learned from messages.
            blank = "No preference" if name == "response_format" else "Learn from my messages"
            field = cast(forms.ChoiceField, self.fields[name])
            # The getter gives the normalised (value, label) pairs; the stubs, any input.
            pairs = field.choices
            choices = [(value, label) for value, label in pairs if value]  # type: ignore[misc,union-attr]
            field.choices = [("", blank), *choices]
        if not self.is_bound:
            self.initial["topics_of_interest"] = ", ".join(self.instance.topics_of_interest or [])

    def clean_timezone(self) -> str:
        value = self.cleaned_data["timezone"]
        if value:
            try:
                zoneinfo.ZoneInfo(value)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError) as error:
                raise forms.ValidationError("Unknown time zone.") from error
        return value

    def clean_topics_of_interest(self) -> list[str]:
        raw = self.cleaned_data["topics_of_interest"]
        topics: list[str] = []
        seen: set[str] = set()
        for part in _TOPIC_SPLIT_RE.split(raw):
            topic = _SPACES_RE.sub(" ", part).strip()
            if not topic or topic.casefold() in seen:
                continue
            if len(topic) > TOPIC_MAX_CHARS:
                raise forms.ValidationError(
                    f"“{topic[:20]}…” is too long: at most {TOPIC_MAX_CHARS} characters a topic."
                )
            seen.add(topic.casefold())
            topics.append(topic)
        if len(topics) > TOPICS_MAX:
            raise forms.ValidationError(f"At most {TOPICS_MAX} topics (you gave {len(topics)}).")
        return topics

    def clean_terminology(self) -> str:
        return self._bounded("terminology", TERMINOLOGY_MAX_CHARS)

    def clean_custom_instructions(self) -> str:
        return self._bounded("custom_instructions", CUSTOM_INSTRUCTIONS_MAX_CHARS)

    def _bounded(self, name: str, limit: int) -> str:
        value = _normalise_text(self.cleaned_data[name])
        if len(value) > limit:
            raise forms.ValidationError(f"At most {limit} characters (this has {len(value)}).")
        return value


class MemoryForm(forms.Form):
    """The memory mode: automatic, ask first or off. A missing or other value is an error
    (never read as "off")."""

    memory_mode = forms.ChoiceField(
        label="Memory",
        choices=[
            (UserProfile.MemoryMode.AUTOMATIC, "Automatic: remember what matters as we talk"),
            (UserProfile.MemoryMode.ASK, "Ask first: new memories wait until I keep them"),
            (UserProfile.MemoryMode.OFF, "Off: remember nothing, use nothing remembered"),
        ],
        widget=forms.RadioSelect,
    )


class ResetStyleForm(forms.Form):
    """A reset of the learned style happens only with an explicit confirmation."""

    confirm = forms.BooleanField(
        required=True,
        label="Yes, forget the style learned from my messages",
        error_messages={"required": "Tick the box to confirm."},
    )


class DomainsForm(forms.Form):
    """Per domain: learn it from my messages, set my level (it wins), or hide it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for domain in DOMAINS:
            self.fields[domain.slug] = forms.ChoiceField(
                label=domain.label, choices=DOMAIN_SETTING_CHOICES, required=False
            )


DOMAIN_SETTING_CHOICES = [
    ("", "Learn from my messages"),
    *DomainLevel.Level.choices,
    (HIDDEN, "Don't learn or use"),
]


class EmailForm(forms.Form):
    """The address a password reset is sent to; stored once confirmed by the link sent to it."""

    email = forms.EmailField(
        label="Email address",
        max_length=254,
        help_text="Only for resetting a forgotten password. We send a link to confirm it.",
    )


class ApiKeyForm(forms.Form):
    name = forms.CharField(
        label="Key name",
        max_length=100,
        help_text="Where you will use it, e.g. “Open WebUI at home”.",
    )
