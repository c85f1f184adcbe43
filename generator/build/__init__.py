"""Build: the pipeline from cards to a finished folder, staged output, progress, and the preview server.

The top layer below the command line: it may import every other layer.
"""
