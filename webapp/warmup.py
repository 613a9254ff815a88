"""Everything a web process would otherwise build on its first request, built when it starts.

Django imports the URL map (and with it every view, the API, the graders' pandas and SciPy) on the
first request, compiles each template the first time it is rendered, Plotly loads its figure
validators when the first chart is built, and the compressed plotly.min.js is made on the first
request for it. At ~2 s, that first request was a visible stall for whoever hit a fresh worker.
`webapp.wsgi` calls `warm()` when the application loads; under gunicorn with `preload_app`
(gunicorn.conf.py) that happens once in the master, before the workers fork. Nothing here touches
the database, so no connection is shared across a fork.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

logger = logging.getLogger(__name__)


def warm() -> float:
    """Load the URL map, compile the site's templates and prepare Plotly; returns the seconds spent."""
    began = time.perf_counter()
    from django.urls import reverse

    reverse("home")  # imports every view module (and what they import) and fills the reverse map
    _compile_templates()
    _prepare_plotly()
    spent = time.perf_counter() - began
    logger.info("web process warmed up in %.2f s", spent)
    return spent


def _compile_templates() -> None:
    """Compile every project template once; the cached loader keeps them for the process."""
    from django.conf import settings
    from django.template.loader import get_template

    for folder in settings.TEMPLATES[0]["DIRS"]:
        root = Path(folder)
        for path in sorted(root.rglob("*.html")):
            get_template(str(path.relative_to(root)))


def _prepare_plotly() -> None:
    """Build one small figure (Plotly loads its validators lazily), the charts' template and the
    compressed plotly.min.js."""
    from leaderboard.web import charts, plotly_asset

    charts.pass_at_k_figure({"warm-up": [(1, 0.0)]})
    plotly_asset._bundle()
