"""Forms of the user's Memory page: the list's filters, and a memory's text."""

from __future__ import annotations

from django import forms

from memory.models import Fact
from memory.selectors.owned import KIND_FILTERS, MemoryFilters

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
