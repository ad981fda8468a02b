from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.db import transaction

from .models import Profile


class SignUpForm(UserCreationForm):
    email = forms.EmailField(help_text="Used only to reset your password.")
    display_name = forms.CharField(
        max_length=100, required=False, help_text="Shown in result tables; your user name if empty."
    )
    affiliation = forms.CharField(max_length=200, required=False)

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self):
        email = self.cleaned_data["email"]
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this e-mail address already exists.")
        return email

    @transaction.atomic
    def save(self, commit=True):
        user = super().save(commit=True)
        Profile.objects.create(
            user=user,
            display_name=self.cleaned_data["display_name"],
            affiliation=self.cleaned_data["affiliation"],
        )
        return user


class ProfileForm(forms.ModelForm):
    class Meta:
        model = Profile
        fields = ("display_name", "affiliation")
