"""The confirmations a user gives before forgetting or deleting."""

from __future__ import annotations

from django import forms

from chat import limits

CONFIRMATION = "forget everything"
PASSWORD_TRIES_PER_HOUR = 5


class ForgetEverythingForm(forms.Form):
    confirmation = forms.CharField(
        label=f'Type "{CONFIRMATION}" to confirm',
        max_length=100,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    reset_style = forms.BooleanField(
        label="Also reset the communication style learned from your messages",
        required=False,
        initial=True,
    )
    clear_preferences = forms.BooleanField(
        label="Also clear the preferences you typed on your profile",
        required=False,
        initial=False,
    )

    def clean_confirmation(self) -> str:
        typed = " ".join(self.cleaned_data["confirmation"].split()).casefold()
        if typed != CONFIRMATION:
            raise forms.ValidationError(
                f'Type "{CONFIRMATION}" exactly as shown: nothing was forgotten.'
            )
        return typed


class AccountDeleteForm(forms.Form):
    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        # Counted before the check: a session left open must not let anyone guess at leisure.
        verdict = limits.hit(
            f"account-delete:{self.user.pk}", limit=PASSWORD_TRIES_PER_HOUR, window=3600
        )
        if not verdict.allowed:
            raise forms.ValidationError(
                "Too many attempts. Try again in "
                f"{verdict.retry_after // 60 + 1} minutes: your account was not deleted."
            )
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password: your account was not deleted.")
        return password


class ChatImportForm(forms.Form):
    """A ChatGPT or Claude export: ``conversations.json`` or the export's zip."""

    file = forms.FileField(
        label="Export file",
        help_text="ChatGPT: the export's zip, or the conversations.json inside it. "
        "Claude: conversations.json.",
        widget=forms.ClearableFileInput(
            attrs={"accept": ".json,.zip,application/json,application/zip"}
        ),
    )

    def __init__(self, *args, max_bytes: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > self.max_bytes:  # said before reading it
            raise forms.ValidationError(
                f"The file is {upload.size / 1e6:,.1f} MB; an import takes at most "
                f"{self.max_bytes / 1e6:,.0f} MB. From a ChatGPT export's zip full of images, "
                "upload the conversations.json inside it."
            )
        return upload
