from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe
from django.views.defaults import page_not_found


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


def not_found(request, exception):
    """handler404: under /api/ (a path no route matches: a slug with a character no slug
    holds, an id below 1) the API's own ``{"detail": …}`` answer, the site's page
    elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
