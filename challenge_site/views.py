from django.db import connection
from django.http import HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe


@require_safe
def healthz(request):
    """For container health checks: the process serves and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


@require_safe
@cache_control(max_age=86400)
def favicon(request):
    """/favicon.ico, which browsers ask for on answers that are not pages (the API's JSON,
    a plot opened on its own): the site's icon. A temporary redirect, as the static file's
    address carries its content's hash and changes with it."""
    return redirect(static("favicon.svg"))
