"""Forms of the user's Memory page: the list's filters, a memory's text, a memory added by hand."""

from __future__ import annotations

from django import forms

from memory.models import Fact
from memory.selectors.owned import KIND_FILTERS, KINDS, MemoryFilters

TEXT_MAX_CHARS = 2000


class MemoryFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search")
    kind = forms.ChoiceField(choices=KIND_FILTERS, required=False, label="Kind")
    category = forms.ChoiceField(
        choices=[("", "Any category"), *Fact.Category.choices], required=False, label="Category"
    )

    def filters(self) -> MemoryFilters:
        """The filters asked for; a bad value (an unknown kind) is dropped, not an error."""
        if not self.is_valid():
            data = {name: self.cleaned_data.get(name, "") for name in ("q", "kind", "category")}
        else:
            data = self.cleaned_data
        query = (data.get("q") or "").replace("\x00", "")
        return MemoryFilters(
            query=" ".join(query.split()),
            kind=data.get("kind") or "",
            category=data.get("category") or "",
        )


class MemoryTextForm(forms.Form):
    text = forms.CharField(
        max_length=TEXT_MAX_CHARS,
        label="Text",
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": TEXT_MAX_CHARS}),
        error_messages={"required": "The text cannot be empty."},
    )

    def clean_text(self) -> str:
        text = self.cleaned_data["text"].replace("\x00", "").strip()
        if not text:
            raise forms.ValidationError("The text cannot be empty.")
        return text


class MemoryAddForm(forms.Form):
    """What the user types to add a memory (``memory.services.memory_add`` checks it again)."""

    kind = forms.ChoiceField(
        choices=[(k.slug, k.label) for k in KINDS.values()],
        label="Kind",
        error_messages={
            "required": "Choose a fact, a decision or an action item.",
            "invalid_choice": "Choose a fact, a decision or an action item.",
        },
    )
    category = forms.ChoiceField(
        choices=Fact.Category.choices,
        required=False,
        initial=Fact.Category.PERSONAL,
        label="Category (facts)",
        error_messages={"invalid_choice": "Choose one of the categories."},
    )
    text = forms.CharField(
        max_length=TEXT_MAX_CHARS,
        label="What to remember",
        widget=forms.Textarea(
            attrs={
                "rows": 2,
                "maxlength": TEXT_MAX_CHARS,
                "placeholder": "e.g. I am left-handed.",
            }
        ),
        error_messages={
            "required": "Write what the assistant should remember.",
            "max_length": f"At most {TEXT_MAX_CHARS} characters.",
        },
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "add-%s")  # the page's filters have their own "id_kind"
        super().__init__(*args, **kwargs)

    def clean_text(self) -> str:
        text = self.cleaned_data["text"].replace("\x00", "").strip()
        if not text:
            raise forms.ValidationError("Write what the assistant should remember.")
        return text
