from django.db import migrations, models


def create_row(apps, schema_editor):
    apps.get_model("leaderboard", "LeaderboardVersion").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    """The leaderboard's version counter (leaderboard.analysis.page_cache): its one row, at 0."""

    dependencies = [
        ('leaderboard', '0013_seed_aggregate_first_run_microseconds'),
    ]

    operations = [
        migrations.CreateModel(
            name='LeaderboardVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('n', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(create_row, migrations.RunPython.noop),
    ]
