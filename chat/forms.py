from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

from chat.models import Conversation
from llm.catalogue import model_choices


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
        super().validate_password_for_user(user, password_field_name=password_field_name)


class RenameForm(forms.Form):
    title = forms.CharField(max_length=200)

    def clean_title(self):
        title = " ".join(self.cleaned_data["title"].split())
        if not title:
            raise forms.ValidationError("A title cannot be empty.")
        return title


class NewConversationForm(forms.Form):
    temporary = forms.BooleanField(required=False)


class ConversationSettingsForm(forms.ModelForm):
    """Strategy, budget and model; the models are the ones the server lists (llm.catalogue)."""

    model = forms.ChoiceField(required=False)

    class Meta:
        model = Conversation
        fields = ("strategy", "context_budget", "model")
        help_texts = {"context_budget": "Tokens per request; empty for the default."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = model_choices(self.instance.model)
        self.fields["model"].help_text = "The models the model server lists."

    def clean_context_budget(self):
        budget = self.cleaned_data["context_budget"]
        if budget is not None and not 512 <= budget <= 2_000_000:
            raise forms.ValidationError("Choose a budget between 512 and 2,000,000 tokens.")
        return budget
