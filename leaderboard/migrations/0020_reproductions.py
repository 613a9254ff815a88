import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0019_research'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='experiment',
            name='unique_experiment_configuration_per_owner',
        ),
        migrations.AddField(
            model_name='experiment',
            name='reproduces',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='reproductions', to='leaderboard.experiment'),
        ),
        migrations.AddField(
            model_name='run',
            name='recipe',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddConstraint(
            model_name='experiment',
            constraint=models.UniqueConstraint(condition=models.Q(('reproduces__isnull', True)), fields=('agent', 'model', 'hardware', 'time_limit_hours', 'settings_hash', 'owner_key'), name='unique_experiment_configuration_per_owner'),
        ),
    ]
