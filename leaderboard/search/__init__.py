"""Search across runs: every step of every run a user may see, on the database's own full-text engine.

    index.index_trajectory(trajectory, steps)   # the store calls it when a run's steps are saved
    page = service.search(user=u, query="\"CUDA out of memory\"", filters=Filters(kind="error"))

One `StepText` row per step (models.py: run, step index, kind, the step's searchable text, bounded;
text.py says what that text is). The engine narrows the rows (engines.py: SQLite's FTS5 of the words
on the embedded default; PostgreSQL's tsvector with a GIN index for words and
pg_trgm for substrings), then every candidate is checked against the query's exact meaning
(query.py), so both engines answer exactly what a scan of the stored steps answers. docs/search.md
describes the query language.
"""
