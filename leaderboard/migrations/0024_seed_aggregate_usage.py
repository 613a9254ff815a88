from django.db import migrations, models


def rebuild_aggregates(apps, schema_editor):
    from leaderboard.analysis.aggregates import maintenance

    maintenance.rebuild(apps=apps)


class Migration(migrations.Migration):
    """Per seed, how many counted runs have a cost or token figure and how many of those the LLM
    gateway metered: the board says whether its cost and tokens are metered or self-reported."""

    dependencies = [
        ('leaderboard', '0023_baseline_lease'),
    ]

    operations = [
        migrations.AddField(
            model_name='seedaggregate',
            name='usage_known',
            field=models.PositiveIntegerField(default=0, help_text='Counted runs with a cost or token figure'),
        ),
        migrations.AddField(
            model_name='seedaggregate',
            name='usage_metered',
            field=models.PositiveIntegerField(default=0, help_text='Of those, figures the LLM gateway metered'),
        ),
        migrations.RunPython(rebuild_aggregates, migrations.RunPython.noop),
    ]
