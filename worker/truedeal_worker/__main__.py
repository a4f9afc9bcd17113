"""``python -m truedeal_worker worker -c 2 -l info``: the Celery CLI on our app."""

import sys

from .app import app

if __name__ == "__main__":  # pragma: no cover
    sys.exit(app.start(sys.argv[1:]))
