from django.db import migrations, models
from django.utils import timezone


def expire_running(apps, schema_editor):
    """A baseline running when this was applied has no lease: give it one that has run out, so the
    first sweep asks for it again (its runner, if alive, started under the old claim)."""
    apps.get_model("leaderboard", "ResearchTask").objects.filter(baseline_status="running").update(
        baseline_lease_expires_at=timezone.now(), baseline_attempts=1)


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0022_code_similarity'),
    ]

    operations = [
        migrations.AddField(
            model_name='researchtask',
            name='baseline_attempts',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='researchtask',
            name='baseline_lease_expires_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='researchtask',
            name='baseline_owner',
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.RunPython(expire_running, migrations.RunPython.noop),
    ]
