"""The in-process (Celery) runner, which holds the database: the worker bootstep (`worker`), the
supervisor of one claimed task from sandbox start to graded run (`supervisor`), what ends it
(`ending`) and the live trajectory appended to the run (`live_steps`). It builds on `runner.jobs` (the
site's side of an attempt, `attempts`, and the recipe, `recipes`, which the runner API uses too) and
`runner.host`. A runner attached by URL and
token (`runner.remote`) imports none of it."""
