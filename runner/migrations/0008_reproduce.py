from django.db import migrations, models


def move_to_recipes(apps, schema_editor):
    """How each task's sandbox ran (JobTask.sandbox and its twin image_digest) becomes its run's recipe."""
    JobTask = apps.get_model("runner", "JobTask")
    Run = apps.get_model("leaderboard", "Run")
    for task in JobTask.objects.exclude(run=None).iterator():
        sandbox = dict(task.sandbox or {})
        image = {"image": sandbox.pop("image", ""), "image_id": sandbox.pop("image_id", "") or task.image_digest}
        if any(image.values()) or sandbox:
            Run.objects.filter(pk=task.run_id).update(recipe={"agent": image, "sandbox": sandbox})


class Migration(migrations.Migration):

    dependencies = [
        ('runner', '0007_llmprice'),
        ('leaderboard', '0020_reproductions'),
    ]

    operations = [
        migrations.RunPython(move_to_recipes, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='jobtask',
            name='image_digest',
        ),
        migrations.RemoveField(
            model_name='jobtask',
            name='sandbox',
        ),
        migrations.AddField(
            model_name='job',
            name='requirements',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='runner',
            name='runtime',
            field=models.CharField(blank=True, help_text='The OCI runtime of a Docker runner (runc, runsc)', max_length=50),
        ),
        migrations.CreateModel(
            name='PublicDataVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('path', models.CharField(max_length=1000)),
                ('signature', models.CharField(help_text="sha256 of every file's name, size and mtime", max_length=64)),
                ('digest', models.CharField(help_text="sha256 of every file's name and content", max_length=64)),
                ('n_files', models.PositiveIntegerField(default=0)),
                ('n_bytes', models.BigIntegerField(default=0)),
                ('computed_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('path', 'signature'), name='one_data_version_per_state')],
            },
        ),
    ]
