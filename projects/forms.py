"""The project form: a name (required, unique per user whatever its case), a description and
instructions, each bounded in length."""

from __future__ import annotations

from django import forms

from projects.models import DESCRIPTION_MAX, INSTRUCTIONS_MAX, NAME_MAX, Project


def _one_line(text: str) -> str:
    return " ".join(text.split())


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=NAME_MAX, strip=True)
    description = forms.CharField(
        max_length=DESCRIPTION_MAX,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="For you: what the project is about.",
    )
    instructions = forms.CharField(
        max_length=INSTRUCTIONS_MAX,
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="Sent to the model in every conversation of the project, after your own "
        "preferences (quoted as your words: they cannot override the system prompt).",
    )

    def __init__(self, *args, user, project: Project | None = None, **kwargs):
        self.user = user
        self.project = project
        if project is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "name": project.name,
                "description": project.description,
                "instructions": project.instructions,
            }
        super().__init__(*args, **kwargs)

    def clean_name(self) -> str:
        name = _one_line(self.cleaned_data["name"])
        if not name:
            raise forms.ValidationError("A project needs a name.")
        taken = Project.objects.filter(user=self.user, name__iexact=name)
        if self.project is not None:
            taken = taken.exclude(pk=self.project.pk)
        if taken.exists():
            raise forms.ValidationError(f"You already have a project called “{name}”.")
        return name

    def clean_description(self) -> str:
        return self.cleaned_data["description"].strip()

    def clean_instructions(self) -> str:
        # No NUL: PostgreSQL text cannot hold one.
        return self.cleaned_data["instructions"].replace("\x00", "").strip()


class DeleteProjectForm(forms.Form):
    """What becomes of the project's conversations and memories."""

    KEEP, DELETE = "keep", "delete"
    fate = forms.ChoiceField(
        choices=[
            (KEEP, "Keep them: move the conversations and memories to everywhere"),
            (DELETE, "Delete the conversations and everything learned in them"),
        ],
        widget=forms.RadioSelect,
        initial=KEEP,
        label="The project's conversations and memories",
    )
    confirm = forms.CharField(
        required=False,
        max_length=NAME_MAX,
        label="Type the project's name",
    )

    def __init__(self, *args, project: Project, **kwargs):
        self.project = project
        super().__init__(*args, **kwargs)

    def clean(self):
        super().clean()
        data = self.cleaned_data  # what Form.clean returns
        if data.get("fate") == self.DELETE:
            typed = _one_line(data.get("confirm") or "")
            if typed.casefold() != self.project.name.casefold():
                self.add_error("confirm", "Type the project's name to delete its conversations.")
        return data

    @property
    def keep(self) -> bool:
        return self.cleaned_data["fate"] == self.KEEP


class ForgetLearningForm(forms.Form):
    """What becomes of what the project learned (its conversations stay in it)."""

    EVERYWHERE, DELETE = "everywhere", "delete"
    fate = forms.ChoiceField(
        choices=[
            (EVERYWHERE, "Move it to everywhere: every conversation may use it"),
            (DELETE, "Forget it: delete its memories and its conversations' summaries"),
        ],
        widget=forms.RadioSelect,
        initial=EVERYWHERE,
        label="What the project learned",
    )
