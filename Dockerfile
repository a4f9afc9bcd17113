# The truedeal image: the core library, the job system, the Celery worker, the web app and serve.
# docker-compose.yml runs it as `gunicorn 'truedeal_web:create_app()'` (web)
# and `truedeal worker` (workers).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY shared ./shared
COPY worker ./worker
COPY web ./web
COPY serve ./serve
COPY examples ./examples
RUN pip install ".[server]" && rm -rf build shared/*.egg-info

# Celery refuses to be comfortable as root; so do we.
RUN useradd --create-home --uid 10001 truedeal
USER truedeal

EXPOSE 8000
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--worker-class", "gthread", "--threads", "8", "truedeal_web:create_app()"]
