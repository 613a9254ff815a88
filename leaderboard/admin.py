from django.contrib import admin

from leaderboard import models


@admin.register(models.Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["slug", "name"]


@admin.register(models.Split)
class SplitAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "benchmark", "position"]


class AnswersInline(admin.StackedInline):
    model = models.CompetitionAnswers
    can_delete = False


@admin.register(models.Competition)
class CompetitionAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "config_metric", "is_lower_better", "n_teams", "awards_medals"]
    list_filter = ["splits", "awards_medals", "kind", "competition_type"]
    search_fields = ["slug", "name"]
    filter_horizontal = ["splits"]
    inlines = [AnswersInline]


@admin.register(models.CompetitionAnswers)
class CompetitionAnswersAdmin(admin.ModelAdmin):
    list_display = ["competition", "answers_path"]
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


@admin.register(models.Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ["__str__", "agent", "model", "hardware", "time_limit_hours"]
    list_select_related = ["agent", "model"]


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "competition", "task_name", "experiment", "seed", "status", "score", "any_medal",
                    "origin", "verification", "owner"]
    list_filter = ["status", "origin", "verification", "any_medal", "is_private"]
    list_select_related = ["competition", "experiment__agent", "experiment__model", "owner"]
    search_fields = ["task_name", "competition__slug"]
    raw_id_fields = ["experiment", "competition", "owner"]


@admin.register(models.Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["run", "kind", "name", "size"]
    raw_id_fields = ["run"]


@admin.register(models.Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["run", "elapsed_seconds", "status", "score", "valid_submission", "any_medal"]
    list_filter = ["status", "any_medal", "valid_submission"]
    raw_id_fields = ["run", "artifact"]


@admin.register(models.Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = ["run", "n_steps", "file", "created_at"]
    raw_id_fields = ["run"]
    readonly_fields = ["file", "n_steps", "kind_counts", "outline"]


@admin.register(models.StepBlock)
class StepBlockAdmin(admin.ModelAdmin):
    list_display = ["trajectory", "first", "count", "offset", "length"]
    raw_id_fields = ["trajectory"]
