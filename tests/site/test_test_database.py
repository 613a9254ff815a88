"""The suite's test database: a copy of a template keyed by what it is made of (tests/db_template.py),
and the catalogue's rows put back after a flush (tests/catalogue_rows.py) as an import would write them."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from tests import catalogue_rows, db_template
from tests.conftest import CATALOGUE_DIR


def test_the_template_key_changes_with_a_catalogue_file(tmp_catalogue):
    key = db_template.template_key(tmp_catalogue)
    assert db_template.template_key(tmp_catalogue) == key
    leaderboard = tmp_catalogue / "competitions" / "spaceship-titanic" / "leaderboard.csv"
    leaderboard.write_text(leaderboard.read_text() + "\n")
    edited = db_template.template_key(tmp_catalogue)
    assert edited != key
    shutil.copytree(tmp_catalogue / "competitions" / "spaceship-titanic", tmp_catalogue / "competitions" / "copy")
    assert db_template.template_key(tmp_catalogue) not in (key, edited)


def test_the_template_key_changes_with_a_migration(tmp_path, monkeypatch):
    key = db_template.template_key(CATALOGUE_DIR)
    app = tmp_path / "someapp"
    (app / "migrations").mkdir(parents=True)
    configs = [*apps.get_app_configs(), SimpleNamespace(path=str(app))]
    monkeypatch.setattr(db_template, "apps", SimpleNamespace(get_app_configs=lambda: configs))
    (app / "migrations" / "0001_initial.py").write_text("operations = []\n")
    added = db_template.template_key(CATALOGUE_DIR)
    (app / "migrations" / "0001_initial.py").write_text("operations = ['changed']\n")
    assert len({key, added, db_template.template_key(CATALOGUE_DIR)}) == 3


def test_the_session_database_is_migrated_and_holds_the_catalogue(catalogue):
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
    folders = list(CATALOGUE_DIR.glob("competitions/*/config.yaml"))
    assert catalogue.filter(benchmark__slug="mle-bench").count() == len(folders)


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_gets_back_what_an_import_writes(catalogue):
    from leaderboard.competitions.catalogue import import_catalogue
    from leaderboard.models import Benchmark, Competition

    rows = catalogue_rows.snapshot()
    since = timezone.now()
    call_command("flush", interactive=False, verbosity=0)
    import_catalogue(CATALOGUE_DIR)
    imported = _content(since)
    call_command("flush", interactive=False, verbosity=0)
    catalogue_rows.restore(rows)
    assert _content(since) == imported
    benchmark = Benchmark.objects.get(slug="mle-bench")
    added = Competition.objects.create(benchmark=benchmark, slug="added-after-the-restore", name="Added")
    assert added.pk > max(competition.pk for competition in Competition.objects.exclude(pk=added.pk))
    assert Competition.objects.count() == len(rows[Competition][1]) + 1


def _content(since) -> dict[str, object]:
    """Every table's row count, and the catalogue's rows with each id replaced by the row it names
    (and a time stamp by whether it was set after `since`)."""
    models = apps.get_models(include_auto_created=True)
    content: dict[str, object] = {m._meta.db_table: m.objects.count() for m in models}
    natural: dict[type, dict[object, tuple]] = {}
    for model in catalogue_rows.catalogue_models():
        fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        by_pk = {}
        for pk, *values in model.objects.values_list("pk", *[f.attname for f in fields]):
            by_pk[pk] = tuple(_natural(f, v, natural, since) for f, v in zip(fields, values, strict=True))
        natural[model] = by_pk
        content[model._meta.db_table] = sorted(by_pk.values(), key=repr)
    return content


def _natural(field, value, natural: dict[type, dict[object, tuple]], since) -> object:
    if field.is_relation and value is not None:
        return natural[field.related_model][value]
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return ("set now", value >= since)
    return value
