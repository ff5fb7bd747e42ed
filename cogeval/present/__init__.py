"""Presentation: console, JSON, CSV, Markdown and CI reports (and, later, charts and widgets)."""
