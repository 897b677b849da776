"""Command-line tools: ir-opt, ir-run (and later ir-convert, ir-extgen)."""
