"""BERT Parameter Atlas: exact, per-tensor parameter counts for transformers encoder models, as a static site."""

__version__ = "1.0.0"  # the only copy: pyproject.toml reads it (dynamic = ["version"])
