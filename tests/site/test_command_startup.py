"""A management command starts without importing the heavy libraries: the settings, the URL
configuration and every command's module load without SciPy, scikit-learn, pandas, Plotly or the
Docker SDK, which the code that computes, grades, draws or builds imports when it runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "sklearn", "pandas", "plotly", "docker")
PROBE = """
import json, sys
import django
django.setup()
from django.core.management import get_commands, load_command_class
from django.urls import get_resolver
get_resolver().url_patterns  # imports every view module, as a command's system checks do
commands = get_commands()
for name, app in commands.items():
    load_command_class(app, name)
heavy = sys.argv[1:]
print(json.dumps({"ours": sum(app.startswith(("leaderboard", "runner", "webapp")) for app in commands.values()),
                  "loaded": sorted({m.split(".")[0] for m in sys.modules} & set(heavy))}))
"""


def test_settings_urls_and_commands_import_no_heavy_library(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings", "DEBUG": "true",
           "MEDALBOARD_VAR_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", PROBE, *HEAVY], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state["ours"] > 10  # the project's commands were loaded, not only Django's
    assert state["loaded"] == []


def test_every_registered_metric_names_a_function():
    # The registry names its functions by module and name; each must resolve to something callable.
    from leaderboard.grading.metrics import METRICS

    assert all(callable(metric.fn) for metric in METRICS.values())


def test_grading_still_exposes_grade_submission():
    from leaderboard import grading
    from leaderboard.grading.engine import grade_submission

    assert grading.grade_submission is grade_submission
