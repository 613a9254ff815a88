from django.apps import AppConfig


class RemoteRunnerConfig(AppConfig):
    name = "runner.remote"
    label = "runner_remote"
    verbose_name = "Remote runner"
