from django.db import connection
from django.http import HttpResponse
from django.views.decorators.http import require_safe


@require_safe
def healthz(request):
    """For container health checks: the process serves and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")
