"""A runner attached with only the site's URL and a token (`manage.py runner --site URL --token T`).

It holds no database, no SECRET_KEY, no answers and no shared disk: its settings module
(runner.remote.settings) refuses every query, and everything it learns or writes goes through
runner.client.SiteClient. It reuses the sandboxes (runner.backends), the readers of what an agent
leaves (runner.host.live, runner.host.sandbox_files, runner.host.outputs, runner.host.output_budget) and the outcome
rules (runner.host.outcomes); nothing of leaderboard, nor the ORM models.
"""
