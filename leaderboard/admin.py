from django.contrib import admin, messages
from django.shortcuts import render

from leaderboard import models
from leaderboard.questions.models import RunSummary, SavedQuestion
from leaderboard.runs import ownership, snapshots
from leaderboard.search.models import StepText
from leaderboard.trust import versions


@admin.register(models.Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["slug", "name"]


@admin.register(models.Split)
class SplitAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "benchmark", "position"]


class AnswersInline(admin.StackedInline):
    model = models.CompetitionAnswers
    can_delete = False


class VersionsInline(admin.TabularInline):
    model = models.CompetitionVersion
    extra = 0
    can_delete = False
    readonly_fields = ["version", "note", "created_by", "created_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # a version is made by bump_version, which also raises the competition's


@admin.register(models.Competition)
class CompetitionAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "config_metric", "is_lower_better", "n_teams", "awards_medals"]
    list_filter = ["splits", "awards_medals", "kind", "competition_type"]
    search_fields = ["slug", "name"]
    filter_horizontal = ["splits"]
    readonly_fields = ["version"]  # raised only by the action below (or manage.py bump_competition_version)
    inlines = [AnswersInline, VersionsInline]
    actions = ["bump_version"]

    @admin.action(description="Mark the version as changed (e.g. a leaky split fixed)")
    def bump_version(self, request, queryset):
        """Asks for the note on a page of its own, then raises each selected competition's version."""
        note = request.POST.get("note", "").strip()
        if "apply" not in request.POST or not note:
            if "apply" in request.POST:
                messages.error(request, "Say what changed: the note is required.")
            return render(request, "admin/leaderboard/bump_version.html", {
                **self.admin_site.each_context(request), "competitions": queryset,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME, "title": "Mark the version as changed",
            })
        for competition in queryset:
            made = versions.bump_version(competition=competition, note=note, user=request.user)
            messages.success(request, f"{competition.slug} is now version {made.version}.")
        return None


@admin.register(models.CompetitionVersion)
class CompetitionVersionAdmin(admin.ModelAdmin):
    """The history of version changes: read-only, made by the competitions' "Mark the version as changed"."""

    list_display = ["competition", "version", "note", "created_by", "created_at"]
    list_select_related = ["competition", "created_by"]
    search_fields = ["competition__slug", "note"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.CompetitionAnswers)
class CompetitionAnswersAdmin(admin.ModelAdmin):
    list_display = ["competition", "answers_path"]
    search_fields = ["competition__slug"]


@admin.register(models.ResearchTask)
class ResearchTaskAdmin(admin.ModelAdmin):
    list_display = ["competition", "entry_script", "baseline_status", "baseline_seconds", "baseline_at"]
    list_filter = ["baseline_status"]
    list_select_related = ["competition"]
    search_fields = ["competition__slug"]


@admin.register(models.HumanScore)
class HumanScoreAdmin(admin.ModelAdmin):
    list_display = ["competition", "position", "rank", "score"]
    list_filter = ["competition"]
    list_select_related = ["competition"]


@admin.register(models.Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "scaffold"]
    search_fields = ["name"]


@admin.register(models.LanguageModel)
class LanguageModelAdmin(admin.ModelAdmin):
    list_display = ["name", "provider"]
    search_fields = ["name"]


@admin.register(models.Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]
    filter_horizontal = ["members"]


@admin.register(models.Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    """Staff transfer an experiment by changing its owner or team (runs join the new owner's twin
    experiment if one exists) and merge experiments with the list's action."""

    list_display = ["id", "__str__", "agent", "model", "hardware", "time_limit_hours", "owner_label"]
    list_select_related = ["agent", "model", "owner", "team"]
    list_filter = ["team", "internet", "test_signal", "known_leakage", "disclosed_by"]
    search_fields = ["agent__name", "model__name", "owner__username", "team__name"]
    raw_id_fields = ["agent", "model", "owner"]
    readonly_fields = ["owner_key", "settings_hash"]
    actions = ["merge_into_oldest"]

    def save_model(self, request, obj, form, change):
        if change and {"owner", "team"} & set(form.changed_data):  # the form checked "not both"
            moved = ownership.transfer_experiment(experiment=obj, owner=obj.team or obj.owner)
            if moved.pk != obj.pk:
                messages.info(request, f"Its runs joined experiment {moved.pk}, which that owner already had.")
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Merge the selected experiments into the oldest one")
    def merge_into_oldest(self, request, queryset):
        experiments = list(queryset.order_by("created_at", "pk"))
        if len(experiments) < 2:
            messages.warning(request, "Select at least two experiments to merge.")
            return
        target = ownership.merge_experiments(sources=experiments[1:], target=experiments[0])
        messages.success(request, f"Merged {len(experiments) - 1} experiment(s) into experiment {target.pk}.")


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "competition", "task_name", "experiment", "seed", "status", "score", "any_medal",
                    "origin", "verification", "owner"]
    list_filter = ["status", "origin", "verification", "any_medal", "is_private"]
    list_select_related = ["competition", "experiment__agent", "experiment__model", "owner"]
    search_fields = ["task_name", "competition__slug"]
    raw_id_fields = ["experiment", "competition", "owner"]


@admin.register(models.RunIntake)
class RunIntakeAdmin(admin.ModelAdmin):
    """Uploads on their way to a run (leaderboard.runs.intake): read-only, the worker and the sweep own them."""

    list_display = ["id", "owner", "status", "failure", "attempts", "run", "created_at", "updated_at"]
    list_filter = ["status", "failure"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner", "run"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["run", "kind", "name", "size"]
    raw_id_fields = ["run"]


@admin.register(models.Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["run", "elapsed_seconds", "status", "score", "valid_submission", "any_medal"]
    list_filter = ["status", "any_medal", "valid_submission"]
    raw_id_fields = ["run", "artifact"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        snapshots.refresh_timeline(obj.run_id)  # the time curve reads the run's copy

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        snapshots.refresh_timeline(obj.run_id)

    def delete_queryset(self, request, queryset):
        run_ids = set(queryset.values_list("run_id", flat=True))
        super().delete_queryset(request, queryset)
        for run_id in run_ids:
            snapshots.refresh_timeline(run_id)


@admin.register(models.Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = ["run", "n_steps", "file", "created_at"]
    raw_id_fields = ["run"]
    readonly_fields = ["file", "n_steps", "kind_counts", "outline"]


@admin.register(models.StepBlock)
class StepBlockAdmin(admin.ModelAdmin):
    list_display = ["trajectory", "first", "count", "offset", "length"]
    raw_id_fields = ["trajectory"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Derived data, to look at: the code that derives it keeps it; a row edited by hand would be wrong."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.SeedAggregate)
class SeedAggregateAdmin(ReadOnlyAdmin):
    """The leaderboard aggregates, to look at: every run write keeps them, `manage.py
    rebuild_leaderboard_aggregates` recomputes them; a row edited by hand would be wrong."""

    list_display = ["experiment", "split", "seed", "audience", "competitions", "any_medal", "gold_medal"]
    list_filter = ["audience", "split"]
    list_select_related = ["experiment__agent", "experiment__model", "split"]
    raw_id_fields = ["experiment"]


@admin.register(models.LeaderboardVersion)
class LeaderboardVersionAdmin(SeedAggregateAdmin):
    """The leaderboard's version (leaderboard.analysis.page_cache), to look at: every change to what the
    leaderboard shows raises it in its transaction."""

    list_display = ["id", "n"]
    list_filter = []
    list_select_related = []
    raw_id_fields = []


class FindingReviewInline(admin.TabularInline):
    """The audit trail: every decision stays, read-only."""

    model = models.FindingReview
    extra = 0
    can_delete = False
    readonly_fields = ["status", "reason", "reviewer", "at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = ["run", "check_name", "severity", "status", "created_at"]
    list_filter = ["check_name", "severity", "status"]
    raw_id_fields = ["run"]
    readonly_fields = ["reviewed_by", "reviewed_at"]
    inlines = [FindingReviewInline]


@admin.register(models.FindingReview)
class FindingReviewAdmin(admin.ModelAdmin):
    list_display = ["finding", "status", "reviewer", "at"]
    readonly_fields = ["finding", "status", "reason", "reviewer", "at"]


@admin.register(models.ReferenceCode)
class ReferenceCodeAdmin(admin.ModelAdmin):
    """Reference code for a competition; saving one (re)compares it with the competition's runs."""

    list_display = ["label", "name", "competition", "added_by", "created_at"]
    list_filter = ["competition"]
    search_fields = ["label", "name"]
    readonly_fields = ["added_by", "created_at"]

    def save_model(self, request, obj, form, change):
        from leaderboard.trust.similarity import index_reference

        obj.added_by = obj.added_by or request.user
        super().save_model(request, obj, form, change)
        index_reference(obj)


class DerivedCodeAdmin(ReadOnlyAdmin):
    """What indexing code derives (fingerprints, postings, counts, pairs), to look at: `manage.py
    index_code` rebuilds it; a row edited by hand would disagree with the others."""

    show_full_result_count = False  # postings are millions of rows


@admin.register(models.CodeFingerprint)
class CodeFingerprintAdmin(DerivedCodeAdmin):
    list_display = ["run", "reference", "competition", "size", "code_bytes", "created_at"]
    raw_id_fields = ["run", "reference"]
    exclude = ["hashes"]


@admin.register(models.CodeMatch)
class CodeMatchAdmin(DerivedCodeAdmin):
    list_display = ["run", "other", "reference", "similarity", "shared"]
    raw_id_fields = ["run", "other", "reference"]


@admin.register(models.CodePosting)
class CodePostingAdmin(DerivedCodeAdmin):
    list_display = ["competition", "hash", "fingerprint", "is_reference"]
    raw_id_fields = ["fingerprint"]


@admin.register(models.CodeHashCount)
class CodeHashCountAdmin(DerivedCodeAdmin):
    list_display = ["competition", "hash", "runs"]


@admin.register(StepText)
class StepTextAdmin(ReadOnlyAdmin):
    """The search index's rows (leaderboard.search), to look at: the trajectory store keeps them as it
    writes steps, and `manage.py index_search` builds them for runs stored before."""

    list_display = ["run", "index", "kind"]
    raw_id_fields = ["trajectory", "run"]
    list_filter = ["kind"]


@admin.register(SavedQuestion)
class SavedQuestionAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "kind", "query", "signature", "is_public", "updated_at"]
    list_filter = ["kind", "is_public"]
    search_fields = ["name", "query", "signature"]
    raw_id_fields = ["owner"]


@admin.register(RunSummary)
class RunSummaryAdmin(ReadOnlyAdmin):
    """The LLM summaries people asked for, with what each cost (leaderboard.questions.summaries)."""

    list_display = ["id", "owner", "selection", "model", "tokens_in", "tokens_out", "cost_usd", "created_at"]
    raw_id_fields = ["owner"]
