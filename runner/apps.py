from django.apps import AppConfig


class RunnerConfig(AppConfig):
    name = "runner"
    verbose_name = "Runners and jobs"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        from leaderboard.runs.job_runs import report_prices_with, report_progress_with
        from runner.host import checks  # noqa: F401 - registers the settings checks
        from runner.jobs.access import grant_new_user
        from runner.jobs.llm_usage import site_cost
        from runner.jobs.reproduction import unfinished_tasks

        post_save.connect(grant_new_user, sender=get_user_model(), dispatch_uid="runner-grant-new-user")
        report_progress_with(unfinished_tasks)  # a reproduction is pending while its jobs' tasks are
        report_prices_with(site_cost)  # the site's own calls to its model, priced as the gateway prices jobs'
