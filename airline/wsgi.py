"""WSGI entry point for gunicorn: `gunicorn airline.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "airline.settings")

application = get_wsgi_application()
