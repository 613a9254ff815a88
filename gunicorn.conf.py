"""gunicorn's settings for Medalboard, read from the working directory (`gunicorn webapp.wsgi -w 2`).

preload_app: the master loads the application once (webapp.wsgi, which warms it: webapp.warmup) and
the workers fork from it ready to answer, sharing its memory, so no worker's first request imports
the site. The warm-up opens no database connection, so none is shared across the fork. A code change
then needs a restart, not a HUP.
"""

preload_app = True
