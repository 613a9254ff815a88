"""The catalogue's rows, read once per test session and written back after a transactional test's flush.

Importing the catalogue from its files takes seconds (92,000 human scores through the ORM); a test that
needs the catalogue after another test flushed the database gets the same rows back with a few
plain INSERTs instead. tests/site/test_test_database.py holds that the rows put back are what an
import writes.
"""

from __future__ import annotations

import io

from django.core.management.color import no_style
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

Rows = dict[type[Model], tuple[list[str], list[tuple]]]


def catalogue_models() -> list[type[Model]]:
    """What leaderboard.competitions.catalogue.import_catalogue writes, parents before children."""
    from leaderboard.models import Benchmark, Competition, CompetitionAnswers, HumanScore, Split

    return [Benchmark, Competition, CompetitionAnswers, HumanScore, Split, Competition.splits.through]


def snapshot() -> Rows:
    rows: Rows = {}
    with connection.cursor() as cursor:
        for model in catalogue_models():
            columns = [field.column for field in model._meta.concrete_fields]
            cursor.execute(
                f"SELECT {', '.join(map(connection.ops.quote_name, columns))} "
                f"FROM {connection.ops.quote_name(model._meta.db_table)}"
            )
            rows[model] = (columns, cursor.fetchall())
    return rows


def restore(rows: Rows) -> None:
    """Insert the rows as they were, ids included and timestamps (auto_now) of now, as an import would
    write them, then move the id sequences past them. PostgreSQL takes them with COPY, in half the time
    of the multi-row INSERTs (92,000 human scores after every transactional test's flush)."""
    write = _copy if connection.vendor == "postgresql" else _insert
    with transaction.atomic(), connection.cursor() as cursor:
        for model, (columns, values) in rows.items():
            table = connection.ops.quote_name(model._meta.db_table)
            names = ", ".join(map(connection.ops.quote_name, columns))
            write(cursor, f"{table} ({names})", len(columns), _stamped_now(model, values))
        for sql in connection.ops.sequence_reset_sql(no_style(), list(rows)):
            cursor.execute(sql)


def _insert(cursor, target: str, width: int, values: list[tuple]) -> None:
    row = f"({', '.join(['%s'] * width)})"
    batch = (connection.features.max_query_params or 10_000) // width
    for start in range(0, len(values), batch):  # many rows a statement: one round trip each
        chunk = values[start : start + batch]
        cursor.execute(
            f"INSERT INTO {target} VALUES {', '.join([row] * len(chunk))}", [v for each in chunk for v in each]
        )


def _copy(cursor, target: str, width: int, values: list[tuple]) -> None:
    """COPY's text format: a row a line, tab-separated, \\N for NULL, backslash escapes in text."""
    lines = "".join("\t".join(map(_copy_text, row)) + "\n" for row in values)
    cursor.cursor.copy_expert(f"COPY {target} FROM STDIN", io.StringIO(lines))


def _copy_text(value) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same double
    return str(value).translate(_COPY_ESCAPES)


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _stamped_now(model: type[Model], values: list[tuple]) -> list[tuple]:
    stamped = [
        i
        for i, f in enumerate(model._meta.concrete_fields)
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    ]
    if not stamped:
        return values
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    return [tuple(now if i in stamped else v for i, v in enumerate(row)) for row in values]
