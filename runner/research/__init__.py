"""Research tasks (MLAgentBench's layout) on a runner: the starter's baseline, the agent's workspace,
and the grading sandbox in which the task's own eval.py scores a workspace.

The site reaches this package only through the runner's jobs and the Celery task
`runner.research.compute_baseline` (runner/tasks.py), never by importing it.
"""
