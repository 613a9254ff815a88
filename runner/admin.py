from django.contrib import admin, messages

from runner import models
from runner.api_v1 import tokens


@admin.register(models.Runner)
class RunnerAdmin(admin.ModelAdmin):
    list_display = ["name", "hostname", "backend", "status", "cpu_count", "memory_gb", "last_heartbeat",
                    "token_revoked_at"]
    list_filter = ["status", "backend"]
    exclude = ["token_hash"]
    readonly_fields = ["token_revoked_at"]
    actions = ["issue_token", "revoke_token"]

    @admin.action(description="Issue a new runner API token (shown once; the old one stops working)")
    def issue_token(self, request, queryset) -> None:
        for runner in queryset:
            _, token = tokens.issue(runner.name)
            messages.warning(request, f"{runner.name}: {token} (shown only now)")

    @admin.action(description="Revoke the runner API token (its tasks go back to the queue)")
    def revoke_token(self, request, queryset) -> None:
        for runner in queryset:
            back = tokens.revoke(runner)
            messages.info(request, f"{runner.name}: token revoked, {back} task(s) back in the queue")


@admin.register(models.AgentDefinition)
class AgentDefinitionAdmin(admin.ModelAdmin):
    list_display = ["name", "image", "builtin", "package_format", "version"]
    list_filter = ["package_format"]


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "agent", "model_name", "experiment", "seeds", "created_by", "created_at"]
    raw_id_fields = ["experiment", "created_by"]
    exclude = ["sealed_env"]  # secrets never shown, not even sealed


@admin.register(models.JobTask)
class JobTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "job", "competition", "seed", "status", "attempts", "runner", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["job", "competition", "run", "runner"]


@admin.register(models.GpuSlot)
class GpuSlotAdmin(admin.ModelAdmin):
    list_display = ["runner", "index", "name", "task"]
    raw_id_fields = ["task"]


@admin.register(models.LlmPrice)
class LlmPriceAdmin(admin.ModelAdmin):
    list_display = ["pattern", "input_usd_per_mtok", "output_usd_per_mtok", "note", "updated_at"]
    search_fields = ["pattern", "note"]


@admin.register(models.PublicDataVersion)
class PublicDataVersionAdmin(admin.ModelAdmin):
    """Deleting a row only makes the next task on that folder hash it again."""

    list_display = ["path", "digest", "n_files", "n_bytes", "computed_at"]
    search_fields = ["path", "digest"]


@admin.register(models.RemoteAttempt)
class RemoteAttemptAdmin(admin.ModelAdmin):
    """What a remote runner sent for one attempt of a task (runner.api_v1); written only by the API."""

    list_display = ["task", "attempt", "agent_lines", "gateway_lines", "created_at"]
    raw_id_fields = ["task"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.RemoteUpload)
class RemoteUploadAdmin(admin.ModelAdmin):
    """A remote runner's upload, staged until its task ends (never served from here)."""

    list_display = ["task", "attempt", "key", "name", "size", "received", "complete", "used"]
    raw_id_fields = ["task"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False
