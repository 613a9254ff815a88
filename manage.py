#!/usr/bin/env python
import os
import sys


def settings_module(argv: list[str]) -> str:
    """A runner attached by URL and token (`runner --site`, or MEDALBOARD_SITE_URL) runs on settings
    with no database and none of the site's secrets (runner.remote.settings); all else on the site's."""
    remote = argv[1:2] == ["runner"] and (
        any(a == "--site" or a.startswith("--site=") for a in argv) or os.environ.get("MEDALBOARD_SITE_URL"))
    return "runner.remote.settings" if remote else "webapp.settings"


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module(sys.argv))
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
