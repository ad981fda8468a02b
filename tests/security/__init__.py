"""Attacks on the organiser's console, kept as regression tests: an organiser of one
challenge, staff who organise nothing and visitors reach nothing hidden of another."""
