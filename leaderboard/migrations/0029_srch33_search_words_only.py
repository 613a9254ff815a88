"""The search index keeps words without positions (search.engines): SQLite's FTS5 table is rebuilt
with detail=none, and PostgreSQL's rows' words are rebuilt so a word longer than WORD_CHARS is kept by
its start (search.text.word_set). PostgreSQL keeps its pg_trgm index of the text, for exact text
inside words (docs/search.md)."""

from django.db import migrations

FTS = "leaderboard_steptext_fts"
TRIGGERS = [
    f"CREATE TRIGGER leaderboard_steptext_fts_delete AFTER DELETE ON leaderboard_steptext BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, text) VALUES ('delete', old.id, old.text); END",
    f"CREATE TRIGGER leaderboard_steptext_fts_update AFTER UPDATE OF text ON leaderboard_steptext BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, text) VALUES ('delete', old.id, old.text); "
    f"INSERT INTO {FTS}(rowid, text) VALUES (new.id, new.text); END",
]
DROP = [f"DROP TRIGGER IF EXISTS leaderboard_steptext_fts_{name}" for name in ("delete", "update")] + [
    f"DROP TABLE IF EXISTS {FTS}"
]


def fts(detail: str) -> list[str]:
    return DROP + [
        f"CREATE VIRTUAL TABLE {FTS} USING fts5(text, content='leaderboard_steptext', content_rowid='id', "
        f"tokenize='unicode61 remove_diacritics 0'{detail})",
        *TRIGGERS,
        f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')",
    ]


def rebuild_words(apps, schema_editor):
    from leaderboard.search.text import fold, word_set

    StepText = apps.get_model("leaderboard", "StepText")
    last = 0
    while batch := list(StepText.objects.filter(pk__gt=last).order_by("pk").values_list("pk", "text", "words")[:2000]):
        changed = [StepText(pk=pk, words=new) for pk, text, words in batch if (new := word_set(fold(text))) != words]
        StepText.objects.bulk_update(changed, ["words"], batch_size=500)
        last = batch[-1][0]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in fts(", detail=none"):
            schema_editor.execute(sql)
    elif schema_editor.connection.vendor == "postgresql":
        rebuild_words(apps, schema_editor)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in fts(""):
            schema_editor.execute(sql)
    # PostgreSQL: the words rebuilt stay valid (a long word cut to its start is still a word)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0028_questions"),
    ]

    operations = [migrations.RunPython(forward, backward)]
