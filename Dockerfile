# The site's image: gunicorn (web) and celery (worker -Q scoring, background -Q
# intervals,boards,mail,celery, beat) run from it; see docker-compose.yml and docs/operators.md.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VAR_DIR=/data

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
# The scoring package's C parser, built with the image's own Python headers; the
# compiler leaves with the layer it came in.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && python -m scoring._build \
 && apt-get purge -y --auto-remove gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
# Static files are collected at build time; the key and host are placeholders for this step only.
RUN DJANGO_DEBUG=0 SECRET_KEY=collectstatic-only ALLOWED_HOSTS=localhost \
    python manage.py collectstatic --noinput \
 && useradd --create-home --uid 1000 app \
 && mkdir -p /data \
 && chown app:app /data

USER app
EXPOSE 8000
# Sync workers and gunicorn's 30 s timeout, stated (docs/operators.md, "Web and workers on
# separate machines": no request does whole-board work).
CMD ["gunicorn", "challenge_site.wsgi", "--bind", "0.0.0.0:8000", "--worker-class", "sync", "--timeout", "30", "--access-logfile", "-"]
