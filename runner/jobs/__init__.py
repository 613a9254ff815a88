"""The site's side of a job's life, on the database: the status words (`states`), creating and
cancelling jobs (`services`), who may submit (`access`), the Celery queues a task goes to (`queues`),
claims on job tasks (`task_leases`), the job half of the periodic sweep (`sweep`), runners registering
(`registry`), which kinds the runner API takes (`api_kinds`), reproductions and the LLM meter's usage
(`llm_usage`). It imports `runner.models` and `runner.host`, never `runner.execution` or `runner.web`."""
