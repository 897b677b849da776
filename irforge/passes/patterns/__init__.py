"""Rewrite patterns shared by passes, one module per kind of rewrite."""
