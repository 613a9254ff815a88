"""The files a research task's folder is made of (leaderboard/competitions/research_tasks.py writes them).

Each is a standalone script that runs inside the task folder, never imported by the site: `prepare.py`
and `eval.py` are shared by every task and get the task's settings on their `TASK = {}` line; the
`train_*.py` files are the tasks' starters, copied as they are. They are kept as real Python files so
that they are linted and read like any code, and so that what the tests run is what a task ships.
"""
