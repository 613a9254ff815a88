from django.contrib import admin

from runner import models


@admin.register(models.Runner)
class RunnerAdmin(admin.ModelAdmin):
    list_display = ["name", "hostname", "backend", "status", "cpu_count", "memory_gb", "last_heartbeat"]
    list_filter = ["status", "backend"]


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "competition", "experiment", "seed", "status", "runner", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["experiment", "competition", "run", "runner", "created_by"]
