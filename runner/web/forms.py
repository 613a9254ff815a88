from django import forms
from django.conf import settings

from leaderboard.models import Competition, Split
from runner.models import AgentDefinition

DESCRIPTION_CHARS = 120


class SecretTextarea(forms.Textarea):
    """A textarea that never renders what was typed: a form shown again after an error (and any copy
    of the page a browser or proxy keeps) holds no secret values."""

    def format_value(self, value):
        return None


class JobForm(forms.Form):
    """The /jobs/new/ form; runner.web.jobs_api.submit validates the rest exactly as the API does. Agents and
    networks are offered from what exists (the API takes any name and refuses unknown ones)."""

    agent = forms.ChoiceField(initial="baseline", help_text="The registered agents; `baseline` is built in")
    model = forms.CharField(max_length=200, required=False, help_text="The LLM the agent uses, if any")
    competitions = forms.ModelMultipleChoiceField(
        queryset=Competition.objects.none(), to_field_name="slug",
        required=False, widget=forms.SelectMultiple(attrs={"size": 8}),
        help_text="Competitions with public data registered on this site: click one, Ctrl-click (⌘-click on a Mac) "
                  "to add more, Shift-click for a range; or leave it empty and pick a split below",
    )
    split = forms.ModelChoiceField(queryset=Split.objects.all(), to_field_name="slug", required=False,
                                   help_text="Or a whole split")
    seeds = forms.IntegerField(min_value=1, initial=1)
    time_limit_minutes = forms.FloatField(min_value=0, initial=5, label="Time limit (minutes)")
    gpus = forms.IntegerField(min_value=0, initial=0, label="GPUs")
    gpu_type = forms.CharField(max_length=100, required=False, label="GPU type", help_text="e.g. A10, H100; empty: any")
    cpus = forms.FloatField(min_value=0, initial=1, label="CPUs")
    memory_gb = forms.FloatField(min_value=0, initial=4, label="Memory (GB)")
    network = forms.ChoiceField(required=False, help_text="An egress network a runner offers, for agents that call "
                                                          "an API; none by default")
    private = forms.BooleanField(required=False, label="Private runs",
                                 help_text="Only you and staff see the runs, their logs and code")
    secrets = forms.CharField(
        required=False, widget=SecretTextarea(attrs={"rows": 2, "autocomplete": "off", "spellcheck": "false"}),
        help_text="NAME=value lines, e.g. OPENAI_API_KEY=sk-...; stored encrypted, given only to the sandbox, "
                  "never shown again (type them again if the form comes back with an error)",
    )

    def __init__(self, *args, **kwargs):
        from runner.jobs.services import networks_on_runners

        super().__init__(*args, **kwargs)
        self.fields["competitions"].queryset = Competition.objects.exclude(public_data_dir="").order_by("slug")
        self.fields["agent"].choices = agent_choices()
        self.fields["network"].choices = [("", "No network"), *((n, n) for n in networks_on_runners())]
        self.fields["private"].initial = settings.JOB_RUNS_PRIVATE_DEFAULT

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


def agent_choices() -> list[tuple[str, str]]:
    """Every registered agent, labelled with its description (the built-in baseline registered first)."""
    from runner.jobs.services import BASELINE, ensure_builtin_agents

    if not AgentDefinition.objects.filter(name=BASELINE).exists():
        ensure_builtin_agents()
    return [(name, _label(name, description))
            for name, description in AgentDefinition.objects.order_by("name").values_list("name", "description")]


def _label(name: str, description: str) -> str:
    text = " ".join(description.split())
    if len(text) > DESCRIPTION_CHARS:
        text = text[:DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"{name}: {text}" if text else name
