"""The in-process (Celery) runner, which holds the database: the worker bootstep (`worker`), the
supervisor of one claimed task from sandbox start to graded run (`supervisor`), what ends it
(`ending`), the recipe recorded as the sandbox starts (`recipes`) and the live trajectory appended to
the run (`live_steps`). It builds on `runner.jobs` and `runner.host`. A runner attached by URL and
token (`runner.remote`) imports none of it."""
