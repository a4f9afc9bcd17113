"""truedeal's web front end and HTTP API (Flask).

``create_app()`` builds the app from the environment (see
:mod:`truedeal_web.config`); run it under gunicorn in production::

    gunicorn -w 4 -k gthread --threads 4 'truedeal_web:create_app()'
"""

from .app import create_app
from .config import WebConfig

__all__ = ["create_app", "WebConfig"]
