"""Content negotiation for API views whose answer is a file (every app's downloads)."""

from rest_framework.negotiation import BaseContentNegotiation


class AnyAccept(BaseContentNegotiation):
    """The answer is a file whatever the client accepts (a zip, a CSV); errors are JSON.
    DRF's default would refuse ``Accept: application/zip`` with 406 before the view runs."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
