from django.db import migrations, models


def rebuild_aggregates(apps, schema_editor):
    from leaderboard.analysis.aggregates import maintenance

    maintenance.rebuild(apps=apps)


class Migration(migrations.Migration):
    """The first run's time as integer microseconds: reading a leaderboard parses no dates."""

    dependencies = [
        ('leaderboard', '0012_stepblock_kind_mask_and_counts'),
    ]

    operations = [
        migrations.RemoveField(model_name='seedaggregate', name='first_run_created_at'),
        migrations.AddField(
            model_name='seedaggregate',
            name='first_run_at_us',
            field=models.BigIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.RunPython(rebuild_aggregates, migrations.RunPython.noop),
    ]
