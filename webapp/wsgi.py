import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
application = get_wsgi_application()

# Build what the first request would otherwise build (webapp.warmup): a fresh process answers at once.
from webapp.warmup import warm  # noqa: E402

warm()
