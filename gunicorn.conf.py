"""gunicorn's settings for Medalboard, read from the working directory (`gunicorn webapp.wsgi -w 2`).

preload_app: the master loads the application once (webapp.wsgi, which warms it: webapp.warmup) and
the workers fork from it ready to answer, sharing its memory, so no worker's first request imports
the site. The warm-up opens no database connection, so none is shared across the fork. A code change
then needs a restart, not a HUP.
"""

import os

preload_app = True

# Threads, not one request per process: an upload request holds its thread while it reads a large
# body, stages the files and waits briefly for the import (MEDALBOARD_INTAKE_WAIT_S). With sync
# workers a burst of uploads took every process and readers queued behind it (a GET / of 7 s under
# hostile uploads, benchmarks/load.py); with threads the other threads keep answering.
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS") or 4)
