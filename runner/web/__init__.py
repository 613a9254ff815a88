"""The site's pages and REST API for jobs and runners: views, forms, URLs and the jobs API (`jobs_api`).
It sits on top: it calls `runner.jobs`, and nothing below imports it."""
