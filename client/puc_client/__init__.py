"""Command-line client of the predictive uncertainty challenges site (`puc --help`)."""

__version__ = "0.1.0"
