"""The runner API (/api/runner/v1/): what a runner attached with only the site's URL and a token
(runner.remote, through runner.client.SiteClient) asks of the site, and the site's side of it.

The site keeps everything a runner must not hold: the database, the lease machine (a claim is the
same conditional UPDATE as a Celery runner's, runner.jobs.task_leases), the answers and the graders. A runner
gets one task at a time with its secrets inside the claim answer, and writes only into that task:
every write names the lease it holds (owner token and attempt) and is fenced by it (409 once the task
was handed on), a task of another runner is 403, and each write can be sent again after a dropped
connection without changing anything twice (line numbers for steps, byte offsets for uploads, the
stored answer for the finish).
"""
