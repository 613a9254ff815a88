from django import forms
from django.contrib.auth.forms import UserCreationForm

from leaderboard.models import INT32_MAX, MAX_MEMORY_GB, MAX_TIME_LIMIT_HOURS, Competition, Run, Team
from leaderboard.runs import snapshots


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(item, initial) for item in data]
        return [single(data, initial)] if data else []


YES_NO_CHOICES = [("", "not disclosed"), ("yes", "yes"), ("no", "no")]
DISCLOSURE_FIELDS = ("internet", "test_signal", "source_url", "report_url", "known_leakage", "leakage_note")


class UploadRunForm(forms.Form):
    # Research tasks are scored by their own eval on a runner (a job), never from an uploaded file: the
    # list offers only what this form can grade; their trajectories still come in under "task".
    competition = forms.ModelChoiceField(
        queryset=Competition.objects.exclude(kind=Competition.Kind.RESEARCH), to_field_name="slug", required=False,
        help_text="Type to search: the competition the run was on",
    )
    task = forms.CharField(
        max_length=300, required=False, label="Or a task outside the catalogue",
        help_text="e.g. an MLAgentBench task (cifar10); leave both empty to use the name the trajectory gives",
    )
    agent = forms.CharField(max_length=200)
    agent_version = forms.CharField(max_length=100, required=False)
    model = forms.CharField(max_length=200, label="Language model")
    seed = forms.IntegerField(initial=0, min_value=0, max_value=INT32_MAX)
    hardware = forms.CharField(max_length=200, required=False, help_text="e.g. 36 vCPU, 440 GB RAM")
    gpu_type = forms.CharField(max_length=100, required=False, label="GPU type")
    gpu_count = forms.IntegerField(required=False, min_value=0, max_value=INT32_MAX, label="GPU count",
                                   help_text="Empty: not disclosed; 0: no GPU")
    cpu_count = forms.IntegerField(required=False, min_value=0, max_value=INT32_MAX, label="vCPUs")
    memory_gb = forms.FloatField(required=False, min_value=0, max_value=MAX_MEMORY_GB, label="RAM (GB)")
    time_limit_hours = forms.FloatField(required=False, min_value=0, max_value=MAX_TIME_LIMIT_HOURS,
                                        label="Time limit (hours)")
    # Disclosures (leaderboard.trust.disclosures): what is left empty shows as "not disclosed".
    internet = forms.ChoiceField(choices=YES_NO_CHOICES, required=False, label="Internet or external knowledge used")
    test_signal = forms.ChoiceField(choices=YES_NO_CHOICES, required=False, label="Test-set signal used",
                                    help_text="Did any score or label of the test set reach the agent?")
    source_url = forms.URLField(max_length=500, required=False, label="Source code link", assume_scheme="https")
    report_url = forms.URLField(max_length=500, required=False, label="Tech report link", assume_scheme="https")
    known_leakage = forms.BooleanField(required=False, label="Known leakage")
    leakage_note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=10_000,
                                   label="What leaked")
    submission = forms.FileField(
        required=False,
        help_text="submission.csv, or a .zip/.tar.gz of the run folder (submission/, logs/, code/)",
    )
    trajectory_files = MultipleFileField(
        required=False, label="Trajectory / log files",
        help_text="AIDE journal.json, Inspect .eval/.json, OpenHands, SWE-agent .traj, MLAgentBench trace...",
    )
    snapshots = MultipleFileField(
        required=False, label="Submission snapshots",
        help_text="Earlier submissions, each named by the seconds since the run started: 3600.csv, 7200.csv...",
    )
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    is_private = forms.BooleanField(required=False, label="Private (only you and staff can see it)")
    check_only = forms.BooleanField(
        required=False, label="Check the format only",
        help_text="Says whether the submission would be graded, without a score; no run is saved and "
                  "the daily grading quota is not used",
    )
    team = forms.ModelChoiceField(
        queryset=Team.objects.none(), required=False, empty_label="me",
        label="Results of", help_text="Your own experiment, or one of a team you belong to",
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        teams = user.teams.all() if user is not None and user.is_authenticated else Team.objects.none()
        if teams.exists():
            self.fields["team"].queryset = teams
        else:
            del self.fields["team"]  # nothing to choose: the run is the uploader's

    def clean_snapshots(self):
        files = self.cleaned_data.get("snapshots") or []
        try:
            snapshots.check_times([f.name for f in files])
        except snapshots.SnapshotError as exc:
            raise forms.ValidationError(str(exc)) from None
        return files

    def clean(self):
        data = super().clean()
        rejected = "submission" in self.errors or "trajectory_files" in self.errors  # e.g. an empty file
        if data.get("check_only") and not (data.get("submission") and data.get("competition")) and not rejected:
            raise forms.ValidationError("Checking the format needs a competition and a submission.")
        if not data.get("submission") and not data.get("trajectory_files") and not rejected:
            raise forms.ValidationError("Upload a submission, a trajectory, or both.")
        if data.get("competition") and data.get("task"):
            raise forms.ValidationError("Choose a competition or name a task, not both.")
        if (data.get("submission") or data.get("snapshots")) and not data.get("competition"):
            self.add_error("competition", "A submission is graded against a competition: choose one.")
        return data


class RunEditForm(forms.ModelForm):
    class Meta:
        model = Run
        fields = ["notes", "is_private"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 4})}


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False)

    class Meta(UserCreationForm.Meta):
        fields = ["username", "email"]
