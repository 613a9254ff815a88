"""The site's side of a job's life, on the database: the status words (`states`), creating and
cancelling jobs (`services`), who may submit (`access`), the Celery queues a task goes to (`queues`),
claims on job tasks (`task_leases`), the job half of the periodic sweep (`sweep`), runners registering
(`registry`), reproductions and the LLM meter's usage
(`llm_usage`), a task's attempt on its run whichever runner runs it (`attempts`) and the run's recipe
(`recipes`). It imports `runner.models`, `runner.host`, `runner.backends`, `runner.agents` and
`runner.gateway`, never `runner.api_v1`, `runner.tasks` or `runner.web`
(tests/site/test_import_rules.py)."""
