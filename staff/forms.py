"""Forms of the staff pages. They clean their own input; views copy ``cleaned_data`` into a
service call."""

from __future__ import annotations

import json
import re
from typing import cast

from django import forms

from chat import jsonsafe
from chat.jsonsafe import MAX_ID
from memory.models import ActionItem, Decision, Fact, MemoryState
from profiles.instructions import METRIC_LABELS
from profiles.style import METRICS
from staff.kinds import Kind
from staff.selectors.memories import MemoryFilters
from staff.selectors.users import USER_SORTS

TEXT_MAX = 4000
IMPORT_MAX_BYTES = 50 * 1024 * 1024
# An export nests about eight levels (document, section, row, history, fields, a JSON field's
# own value); context reports a few more.
IMPORT_MAX_DEPTH = 32
_LIST_SPLIT = re.compile(r"[,\n;]")


def _list(value: str) -> list[str]:
    items = (" ".join(part.split()) for part in _LIST_SPLIT.split(value or ""))
    return list(dict.fromkeys(item for item in items if item))


class ChangeFilterForm(forms.Form):
    """The recent-changes filters, from the query string. Invalid values are dropped."""

    before = forms.DateTimeField(required=False)
    kind = forms.CharField(required=False, max_length=20)
    user_id = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)

    def filters(self) -> dict:
        self.is_valid()
        data = {name: value for name, value in self.cleaned_data.items() if name not in self.errors}
        return {
            "before": data.get("before"),
            "kind_slug": data.get("kind") or "",
            "user_id": data.get("user_id"),
        }


class UserSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search users")
    sort = forms.ChoiceField(required=False, choices=list(USER_SORTS.items()))


class MemoryFilterForm(forms.Form):
    """The list's filters, from the query string. Invalid values are dropped, not fatal."""

    q = forms.CharField(required=False, max_length=200, label="Search")
    user = forms.CharField(required=False, max_length=150, label="User")
    conversation = forms.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, widget=forms.HiddenInput
    )
    # A project's id, or "none" for what is everywhere (outside any project).
    project = forms.RegexField(
        required=False, regex=r"^(none|[1-9][0-9]{0,17})$", widget=forms.HiddenInput
    )
    category = forms.ChoiceField(
        required=False, choices=[("", "Any category"), *Fact.Category.choices]
    )
    status = forms.ChoiceField(required=False)
    state = forms.ChoiceField(
        required=False, choices=[("", "Any state"), *MemoryState.choices], label="State"
    )
    pinned = forms.ChoiceField(
        required=False, choices=[("", "Pinned or not"), ("yes", "Pinned"), ("no", "Not pinned")]
    )
    updated_from = forms.DateField(
        required=False, label="Updated from", widget=forms.DateInput(attrs={"type": "date"})
    )
    updated_to = forms.DateField(
        required=False, label="to", widget=forms.DateInput(attrs={"type": "date"})
    )
    sort = forms.ChoiceField(required=False)

    def __init__(self, *args, kind: Kind, **kwargs):
        super().__init__(*args, **kwargs)
        self.kind = kind
        cast(forms.ChoiceField, self.fields["status"]).choices = [
            ("", "Any status"),
            *kind.statuses,
        ]
        cast(forms.ChoiceField, self.fields["sort"]).choices = list(kind.sorts.items())
        if kind.slug != "fact":
            del self.fields["category"]
            del self.fields["pinned"]

    def filters(self) -> MemoryFilters:
        self.is_valid()
        data = {name: value for name, value in self.cleaned_data.items() if name not in self.errors}
        pinned = {"yes": True, "no": False}.get(data.get("pinned") or "")
        return MemoryFilters(
            query=(data.get("q") or "").strip(),
            username=(data.get("user") or "").strip(),
            conversation_id=data.get("conversation"),
            project=data.get("project") or "",
            category=data.get("category") or "",
            status=data.get("status") or "",
            state=data.get("state") or "",
            pinned=pinned,
            updated_from=data.get("updated_from"),
            updated_to=data.get("updated_to"),
            sort=data.get("sort") or "-updated_at",
        )


class FactForm(forms.Form):
    text = forms.CharField(max_length=TEXT_MAX, widget=forms.Textarea(attrs={"rows": 2}))
    subject = forms.CharField(required=False, max_length=200)
    category = forms.ChoiceField(choices=Fact.Category.choices)
    importance = forms.FloatField(
        min_value=0.0, max_value=1.0, widget=forms.NumberInput(attrs={"step": "0.05"})
    )
    pinned = forms.BooleanField(required=False)
    status = forms.ChoiceField(choices=Fact.Status.choices)

    def clean_text(self) -> str:
        text = " ".join(self.cleaned_data["text"].split())
        if not text:
            raise forms.ValidationError("A fact needs some text.")
        return text


class DecisionForm(forms.Form):
    what = forms.CharField(max_length=TEXT_MAX, widget=forms.Textarea(attrs={"rows": 2}))
    context = forms.CharField(
        required=False, max_length=TEXT_MAX, widget=forms.Textarea(attrs={"rows": 2})
    )
    rationale = forms.CharField(
        required=False, max_length=TEXT_MAX, widget=forms.Textarea(attrs={"rows": 2})
    )
    alternatives = forms.CharField(
        required=False, max_length=TEXT_MAX, help_text="Separated by commas."
    )
    stakeholders = forms.CharField(
        required=False, max_length=TEXT_MAX, help_text="Separated by commas."
    )
    status = forms.ChoiceField(choices=Decision.Status.choices)

    def clean_what(self) -> str:
        what = " ".join(self.cleaned_data["what"].split())
        if not what:
            raise forms.ValidationError("A decision needs a description.")
        return what

    def clean_alternatives(self) -> list[str]:
        return _list(self.cleaned_data["alternatives"])

    def clean_stakeholders(self) -> list[str]:
        return _list(self.cleaned_data["stakeholders"])


class ActionItemForm(forms.Form):
    what = forms.CharField(max_length=TEXT_MAX, widget=forms.Textarea(attrs={"rows": 2}))
    owner = forms.CharField(required=False, max_length=200)
    due_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    status = forms.ChoiceField(choices=ActionItem.Status.choices)

    def clean_what(self) -> str:
        what = " ".join(self.cleaned_data["what"].split())
        if not what:
            raise forms.ValidationError("An action item needs a description.")
        return what


EDIT_FORMS = {"fact": FactForm, "decision": DecisionForm, "action_item": ActionItemForm}


def edit_form(kind: Kind, memory, data=None) -> forms.Form:
    """The edit form of ``memory``, bound to ``data`` or showing the memory's values."""
    form_class = EDIT_FORMS[kind.slug]
    initial = {name: getattr(memory, name) for name in form_class.base_fields}
    for name in ("alternatives", "stakeholders"):
        if name in initial:
            initial[name] = ", ".join(initial[name] or [])
    return form_class(data, initial=initial, prefix=f"{kind.slug}-{memory.pk}")


class SupersedeForm(forms.Form):
    by = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        label="Replaced by fact #",
        help_text="Optional.",
    )


class IdListField(forms.Field):
    """Many ids from repeated parameters (``ids=3&ids=7``)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[int]:
        if not value:
            return []
        values = value if isinstance(value, list | tuple) else [value]
        try:
            ids = sorted({int(v) for v in values})
        except (TypeError, ValueError) as error:
            raise forms.ValidationError("Not a list of ids.") from error
        if any(not 1 <= i <= MAX_ID for i in ids):
            raise forms.ValidationError("Not a list of ids.")
        return ids


class BulkDeleteForm(forms.Form):
    ids = IdListField(error_messages={"required": "Select at least one memory."})
    confirm = forms.BooleanField(required=False)


class StyleForm(forms.Form):
    """The learned metrics, as staff correct them (0 to 1); a metric left empty is unchanged."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in METRICS:
            self.fields[name] = forms.FloatField(
                label=METRIC_LABELS[name],
                min_value=0.0,
                max_value=1.0,
                required=False,
                widget=forms.NumberInput(attrs={"step": "0.01"}),
            )


class DiffForm(forms.Form):
    a = forms.IntegerField(min_value=1, max_value=2**31 - 1, label="From version")
    b = forms.IntegerField(min_value=1, max_value=2**31 - 1, label="To version")


class UserDataDeleteForm(forms.Form):
    confirm = forms.BooleanField(
        required=True,
        label="Yes, delete this user's conversations, memories and profile",
        error_messages={"required": "Tick the box to confirm."},
    )
    erase_history = forms.BooleanField(
        required=False,
        label="Also erase the edit history of the deleted data (who changed what stays in the "
        "admin log)",
    )


class ImportForm(forms.Form):
    file = forms.FileField(label="Export file (JSON)")
    username = forms.CharField(
        required=False,
        max_length=150,
        help_text="Import for this user instead of the one named in the file.",
    )

    def clean_file(self) -> dict:
        upload = self.cleaned_data["file"]
        if upload.size > IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is too large ({upload.size:,} bytes; at most {IMPORT_MAX_BYTES:,})."
            )
        try:
            return jsonsafe.loads(upload.read().decode("utf-8"), max_depth=IMPORT_MAX_DEPTH)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise forms.ValidationError(f"Not a JSON file: {error}") from error
        except jsonsafe.JSONRejected as error:
            raise forms.ValidationError(f"Not a JSON file we can import: {error}") from error
