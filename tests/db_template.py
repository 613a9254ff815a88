"""The test database, built once and copied: migrated and with the catalogue imported, it is kept as a
template named by a hash of what it is made of, and each test session (each pytest-xdist worker) gets a
copy of it instead of migrating and importing on its own.

The key hashes every migration of the installed apps, the project's own Python code (the importer that
fills it), this module, the catalogue's files, Django's version and the database's engine and server,
so a change to any of them builds a new template. SQLite templates are files in var/test-db-templates/ (git-ignored);
PostgreSQL templates are databases named medalboard_tpl_<key>, copied with CREATE DATABASE ... TEMPLATE.
`python -m tests.db_template build NAME CATALOGUE_DIR` builds one (the fixture runs it in a process of
its own, so that nothing of the build stays in the test session's Django).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import django
from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connections

FORMAT = "1"  # bump when what a template holds changes in a way the hashed files do not show
PROJECT_PACKAGES = ("leaderboard", "runner", "webapp")
BASE_DIR = Path(__file__).resolve().parents[1]
TEMPLATE_DIR = BASE_DIR / "var" / "test-db-templates"
PG_PREFIX = "medalboard_tpl_"
KEEP = 3  # templates kept per engine: a few branches' worth, the newest first


def template_key(catalogue_dir: Path, alias: str = "default") -> str:
    db = connections[alias].settings_dict
    digest = hashlib.sha256(f"{FORMAT} {django.__version__} {db['ENGINE']} {db.get('HOST')} {db.get('PORT')}".encode())
    for path in sorted(_inputs(Path(catalogue_dir))):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def _inputs(catalogue_dir: Path) -> Iterator[Path]:
    yield Path(__file__)  # how a template is built
    for config in apps.get_app_configs():
        yield from Path(config.path, "migrations").glob("*.py")
    for package in PROJECT_PACKAGES:
        yield from (p for p in Path(BASE_DIR, package).rglob("*.py") if "migrations" not in p.parts)
    yield from (p for p in catalogue_dir.rglob("*") if p.is_file())


def clone(catalogue_dir: Path, alias: str = "default") -> None:
    """Make this session's test database (the TEST NAME pytest-django gave it) a copy of the template,
    building the template first when there is none for today's key."""
    connection = connections[alias]
    key = template_key(catalogue_dir, alias)
    target = connection.creation._get_test_db_name()
    TEMPLATE_DIR.mkdir(parents=True, exist_ok=True)
    with _locked(TEMPLATE_DIR / f"{key}.lock"):
        if connection.vendor == "sqlite":
            _clone_sqlite(key, Path(target), catalogue_dir)
        elif connection.vendor == "postgresql":
            _clone_postgres(connection, key, target, catalogue_dir)
        else:
            raise NotImplementedError(f"no template copy for {connection.vendor}")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # one builder; the other workers wait for its template
        yield


def _clone_sqlite(key: str, target: Path, catalogue_dir: Path) -> None:
    template = TEMPLATE_DIR / f"{key}.sqlite3"
    if not template.exists():
        building = TEMPLATE_DIR / f"{key}.{os.getpid()}.building.sqlite3"
        _build(str(building), catalogue_dir)
        os.replace(building, template)
        _prune(sorted(TEMPLATE_DIR.glob("*.sqlite3"), key=lambda p: p.stat().st_mtime, reverse=True))
    for stale in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        stale.unlink(missing_ok=True)  # an older file's -wal would apply to the copy
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, target)
    os.utime(template)  # recently used: pruned last


def _prune(newest_first: list[Path]) -> None:
    for old in newest_first[KEEP:]:
        if old.name.count(".") == 1:  # a finished template, not another process's build
            old.unlink(missing_ok=True)
            old.with_suffix(".lock").unlink(missing_ok=True)


def _clone_postgres(connection, key: str, target: str, catalogue_dir: Path) -> None:
    template = PG_PREFIX + key
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY oid DESC", [PG_PREFIX + "%"])
        templates = [name for (name,) in cursor.fetchall() if "_build_" not in name]
    if template not in templates:
        building = f"{template}_build_{os.getpid()}"
        _build(building, catalogue_dir)
        with connection._nodb_cursor() as cursor:
            try:
                cursor.execute(f'ALTER DATABASE "{building}" RENAME TO "{template}"')
            except DatabaseError:  # another checkout's session built the same one meanwhile
                cursor.execute(f'DROP DATABASE "{building}"')
        templates.insert(0, template)
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{target}"')
        cursor.execute(f'CREATE DATABASE "{target}" TEMPLATE "{template}"')
        for old in [t for t in templates if t != template][KEEP - 1 :]:
            try:
                cursor.execute(f'DROP DATABASE IF EXISTS "{old}"')
            except DatabaseError:  # a session elsewhere is copying it: pruned next time
                pass


def _build(name: str, catalogue_dir: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "tests.db_template", "build", name, str(catalogue_dir)], cwd=BASE_DIR, check=True
    )


def build(name: str, catalogue_dir: Path) -> None:
    """Create the database NAME as the test session's would be made, migrate it and import the catalogue."""
    from django.test.utils import setup_databases

    from leaderboard.competitions.catalogue import import_catalogue

    default = settings.DATABASES["default"]
    default["TEST"] = {**default.get("TEST", {}), "NAME": name}
    setup_databases(verbosity=0, interactive=False, aliases={"default"})
    import_catalogue(catalogue_dir)
    connection = connections["default"]
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the file that is copied
    connection.close()


if __name__ == "__main__":
    if sys.argv[1:2] != ["build"] or len(sys.argv) != 4:
        sys.exit("usage: python -m tests.db_template build NAME CATALOGUE_DIR")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")
    django.setup()
    build(sys.argv[2], Path(sys.argv[3]))
