"""Search across runs: every step of every run a user may see, on the database's own full-text engine.

    index.index_trajectory(trajectory, steps)   # the store calls it when a run's steps are saved
    page = service.search(user=u, query="\"CUDA out of memory\"", filters=Filters(kind="error"))

One `StepText` row per step (models.py: run, step index, kind, the step's searchable text, bounded;
text.py says what that text is). The engine narrows the rows by the words they hold (engines.py:
SQLite's FTS5 of the text on the embedded default; PostgreSQL's tsvector of its words with a GIN
index), then every candidate is checked against the query's exact meaning
(query.py), so both engines answer exactly what a scan of the stored steps answers. docs/search.md
describes the query language.
"""
