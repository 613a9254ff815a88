from django import forms

from leaderboard.models import Competition, Split


class JobForm(forms.Form):
    """The /jobs/new/ form; runner.api.submit validates the rest exactly as the API does."""

    agent = forms.CharField(max_length=100, initial="baseline",
                            help_text="`baseline` is the built-in scikit-learn agent; others are registered by staff")
    model = forms.CharField(max_length=200, required=False, help_text="The LLM the agent uses, if any")
    competitions = forms.ModelMultipleChoiceField(
        queryset=Competition.objects.none(), to_field_name="slug",
        required=False, help_text="Competitions with public data registered on this site",
    )
    split = forms.ModelChoiceField(queryset=Split.objects.all(), to_field_name="slug", required=False,
                                   help_text="Or a whole split")
    seeds = forms.IntegerField(min_value=1, initial=1)
    time_limit_minutes = forms.FloatField(min_value=0, initial=5, label="Time limit (minutes)")
    gpus = forms.IntegerField(min_value=0, initial=0, label="GPUs")
    gpu_type = forms.CharField(max_length=100, required=False, label="GPU type", help_text="e.g. A10, H100; empty: any")
    cpus = forms.FloatField(min_value=0, initial=1, label="CPUs")
    memory_gb = forms.FloatField(min_value=0, initial=4, label="Memory (GB)")
    network = forms.CharField(max_length=128, required=False,
                              help_text="An egress network for agents that call an API (empty: no network)")
    secrets = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "off", "spellcheck": "false"}),
        help_text="NAME=value lines, e.g. OPENAI_API_KEY=sk-...; stored encrypted, given only to the sandbox",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["competitions"].queryset = Competition.objects.exclude(public_data_dir="").order_by("slug")

    def clean_secrets(self) -> dict[str, str]:
        env: dict[str, str] = {}
        for number, line in enumerate(self.cleaned_data["secrets"].splitlines(), 1):
            if not line.strip():
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip():
                raise forms.ValidationError(f"line {number}: write NAME=value")
            env[name.strip()] = value.strip()
        return env

    def job_data(self) -> dict:
        data = self.cleaned_data
        return {**data, "competitions": [c.slug for c in data["competitions"]],
                "split": data["split"].slug if data["split"] else None}
