"""Experiments get an owner (a user or a team); runs become unique by content hash.

Existing experiments get the owner of their runs. An experiment whose runs belong to several owners
is split: the first owner keeps it, every other owner gets a copy of the configuration with their
runs (runs without an owner, e.g. catalogue, demo and published imports, go to an ownerless one).
Of runs that share a content hash (identical uploads that raced before the constraint), the oldest
keeps the hash and the others lose it: they stay, but are no longer matched as repeats.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _key(owner_id):
    return f"user:{owner_id}" if owner_id is not None else ""


def assign_owners(apps, schema_editor):
    Experiment = apps.get_model("leaderboard", "Experiment")
    Run = apps.get_model("leaderboard", "Run")
    for experiment in Experiment.objects.order_by("pk"):
        owners = sorted(set(Run.objects.filter(experiment=experiment).values_list("owner_id", flat=True)),
                        key=lambda o: (o is None, o))
        first, others = (owners[0], owners[1:]) if owners else (None, [])
        experiment.owner_id, experiment.owner_key = first, _key(first)
        experiment.save(update_fields=["owner", "owner_key"])
        source_pk = experiment.pk
        for owner_id in others:
            copy = Experiment.objects.get(pk=source_pk)
            copy.pk = None
            copy.owner_id, copy.owner_key = owner_id, _key(owner_id)
            copy.save()
            Run.objects.filter(experiment_id=source_pk, owner_id=owner_id).update(experiment=copy)
    _check_now(schema_editor)


def _check_now(schema_editor):
    """PostgreSQL refuses to ALTER a table with deferred foreign-key checks pending: run them now."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def forget_duplicate_hashes(apps, schema_editor):
    Run = apps.get_model("leaderboard", "Run")
    seen = set()
    for pk, content_hash in Run.objects.exclude(content_hash="").order_by("created_at", "pk").values_list(
            "pk", "content_hash"):
        if content_hash in seen:
            Run.objects.filter(pk=pk).update(content_hash="")
        seen.add(content_hash)
    _check_now(schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0006_run_waiting_and_demo'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Team',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100, unique=True)),
                ('members', models.ManyToManyField(blank=True, related_name='teams', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.RemoveConstraint(
            model_name='experiment',
            name='unique_experiment_configuration',
        ),
        migrations.AddField(
            model_name='experiment',
            name='owner',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='experiments', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='experiment',
            name='owner_key',
            field=models.CharField(blank=True, editable=False, max_length=40),
        ),
        migrations.AddField(
            model_name='experiment',
            name='team',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='experiments', to='leaderboard.team'),
        ),
        migrations.RunPython(assign_owners, migrations.RunPython.noop),
        migrations.RunPython(forget_duplicate_hashes, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='run',
            constraint=models.UniqueConstraint(condition=models.Q(('content_hash', ''), _negated=True), fields=('content_hash',), name='unique_run_content'),
        ),
        migrations.AddConstraint(
            model_name='experiment',
            constraint=models.UniqueConstraint(fields=('agent', 'model', 'hardware', 'time_limit_hours', 'settings_hash', 'owner_key'), name='unique_experiment_configuration_per_owner'),
        ),
        migrations.AddConstraint(
            model_name='experiment',
            constraint=models.CheckConstraint(condition=models.Q(('owner__isnull', True), ('team__isnull', True), _connector='OR'), name='experiment_owned_by_a_user_or_a_team'),
        ),
    ]
