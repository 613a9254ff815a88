"""Block rows learn which kinds they hold (a bit mask the database can test) and how many steps of
each kind come before them, so a request reads only the block rows it needs. Existing rows are
filled in from their `kinds`, trajectory by trajectory."""

from collections import Counter

import orjson
from django.db import migrations, models

# trajectory_store.block_index.KINDS as of this migration (append-only there too).
KINDS = ("plan", "action", "observation", "code", "command", "score", "llm", "submission", "error", "message")


def fill_kind_columns(apps, schema_editor):
    trajectory_model, block_model = apps.get_model("leaderboard", "Trajectory"), apps.get_model("leaderboard", "StepBlock")
    for trajectory_id in trajectory_model.objects.values_list("pk", flat=True).iterator():
        before, changed = Counter(), []
        for block in block_model.objects.filter(trajectory_id=trajectory_id).order_by("first"):
            kinds = orjson.loads(block.kinds)
            block.kind_mask = sum(1 << KINDS.index(k) if k in KINDS else 1 << 30 for k in kinds if kinds[k])
            block.kinds_before = orjson.dumps(dict(before)).decode()
            before.update(kinds)
            changed.append(block)
        block_model.objects.bulk_update(changed, ["kind_mask", "kinds_before"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0011_leaderboard_aggregates'),
    ]

    operations = [
        migrations.AddField(
            model_name='stepblock',
            name='kind_mask',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='stepblock',
            name='kinds_before',
            field=models.TextField(blank=True, default='{}', help_text='JSON: steps of each kind in earlier blocks'),
        ),
        migrations.RunPython(fill_kind_columns, migrations.RunPython.noop),
    ]
