from typing import cast

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

from chat.models import Conversation
from llm.catalogue import model_choices
from llm.clients import chat_endpoint


class SignupForm(UserCreationForm):
    """A username and a password; an email address optional (confirmed by a link before it
    is stored, so it is not a field of the user here)."""

    email = forms.EmailField(
        label="Email address (optional)",
        required=False,
        max_length=254,
        help_text="Lets you reset a forgotten password. We send a link to confirm it.",
    )

    field_order = ("username", "email", "password1", "password2")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A refused sign-up (a taken name, say) keeps what was typed, the passwords too.
        for name in ("password1", "password2"):
            self.fields[name].widget.render_value = True

    def validate_password_for_user(self, user, password_field_name="password1"):  # noqa: S107
        # The rules judge the password typed first: their error goes under that field, not
        # under the confirmation (Django's default).
        # django-stubs leave SetPasswordMixin out of BaseUserCreationForm's bases.
        super().validate_password_for_user(  # type: ignore[misc]
            user, password_field_name=password_field_name
        )


class RenameForm(forms.Form):
    title = forms.CharField(max_length=200)

    def clean_title(self):
        title = " ".join(self.cleaned_data["title"].split())
        if not title:
            raise forms.ValidationError("A title cannot be empty.")
        return title


class ModelForm(forms.Form):
    """The model a conversation is answered by, among those the server lists (""): the
    configured default)."""

    model = forms.ChoiceField(required=False)

    def __init__(self, *args, current: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["model"]).choices = model_choices(current)


class NewConversationForm(ModelForm):
    temporary = forms.BooleanField(required=False)


def model_picker_choices(current: str = "") -> list[tuple[str, str]]:
    """The header's model picker: the server's models when it lists several; none offline
    (no model is there to name) or with one model."""
    if not chat_endpoint().configured:
        return []
    choices = model_choices(current)
    return choices if len(choices) > 1 else []


class ConversationSettingsForm(forms.ModelForm):
    """Strategy, budget and model; the models are the ones the server lists (llm.catalogue)."""

    model = forms.ChoiceField(required=False)

    # Plain words for what each choice does (the stored values stay the engine's names).
    STRATEGY_CHOICES = [
        (Conversation.Strategy.SUMMARY_BUFFER, "A summary + recent messages"),
        (Conversation.Strategy.TOKEN_LIMIT, "As many recent messages as fit"),
        (Conversation.Strategy.SLIDING_WINDOW, "Only the last few messages"),
    ]
    ADVANCED = ("strategy", "context_budget")

    class Meta:
        model = Conversation
        fields = ("strategy", "context_budget", "model")
        labels = {
            "strategy": "What the model is sent",
            "context_budget": "At most, each time (tokens)",
        }
        help_texts = {
            "context_budget": "About ¾ of a word a token. Empty: the default.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["strategy"]).choices = self.STRATEGY_CHOICES
        self.fields["context_budget"].widget.attrs["placeholder"] = (
            f"{settings.MEMORYCHAT_CONTEXT_BUDGET:,}"
        )
        if chat_endpoint().configured:
            models = model_choices(self.instance.model)
            cast(forms.ChoiceField, self.fields["model"]).choices = models
            self.fields["model"].help_text = "The models the model server lists."
        else:  # offline: no model answers, so none is named
            del self.fields["model"]

    def basic_fields(self):
        return [field for field in self if field.name not in self.ADVANCED]

    def advanced_fields(self):
        return [field for field in self if field.name in self.ADVANCED]

    def clean_context_budget(self):
        budget = self.cleaned_data["context_budget"]
        if budget is not None and not 512 <= budget <= 2_000_000:
            raise forms.ValidationError("Choose a budget between 512 and 2,000,000 tokens.")
        return budget
