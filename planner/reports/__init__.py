"""Renderers: turn plans, estimates and tables into strings (table, markdown, JSON, CSV, HTML).

Renderers return strings; only the CLI writes them out.
"""
