"""A web process builds at start-up what its first request used to build (webapp.warmup), and the
warm-up never touches the database (gunicorn preloads it in the master before forking workers)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
import webapp.wsgi  # loads and warms the application, as gunicorn does
from django.template import engines
from leaderboard.web import charts, plotly_asset
loader = engines["django"].engine.template_loaders[0]
print(json.dumps({
    "modules": [m for m in ("leaderboard.web.views", "leaderboard.web.replay", "leaderboard.api.runs",
                            "leaderboard.grading", "plotly.graph_objects") if m in sys.modules],
    "templates_cached": len(getattr(loader, "get_template_cache", {})),
    "plotly_bundle": plotly_asset._bundle.cache_info().currsize,
    "chart_template": charts._white_template.cache_info().currsize,
}))
"""


def test_loading_the_wsgi_application_warms_it_without_a_database(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings", "DEBUG": "false", "SECRET_KEY": "warm-up-test",
           "MEDALBOARD_VAR_DIR": str(tmp_path), "STATIC_ROOT": str(tmp_path / "static"),
           # Nothing listens there: any query during the warm-up would fail the import.
           "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none", "DATABASE_CONN_MAX_AGE": "0"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state["modules"] == ["leaderboard.web.views", "leaderboard.web.replay", "leaderboard.api.runs",
                                "leaderboard.grading", "plotly.graph_objects"]
    assert state["templates_cached"] >= len(list((ROOT / "templates").rglob("*.html")))
    assert state["plotly_bundle"] == state["chart_template"] == 1
