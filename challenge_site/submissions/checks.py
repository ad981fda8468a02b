"""System checks of the scoring workers' setup."""

from django.core import checks

from scoring import textfile


@checks.register()
def scoring_parser_is_compiled(app_configs, **kwargs):
    """Without its C parser, scoring reads prediction files with numpy alone: the same
    values and messages, but several times slower on most layouts (README, Scoring speed)."""
    if textfile.compiled():
        return []
    return [
        checks.Warning(
            "the scoring package's C parser (scoring/_native.c) is not built",
            hint="run `python -m scoring._build` (make install and the Dockerfile do)",
            id="submissions.W001",
        )
    ]
