"""BERT Parameter Atlas: exact, per-tensor parameter counts for transformers encoder models, as a static site."""

__version__ = "0.5.0"  # the only copy: pyproject.toml reads it (dynamic = ["version"])
