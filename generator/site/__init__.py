"""Site: the views of counted models, rendering and filters, SVG, exports, search records, page kinds.

Imports ``analysis``, ``cards`` and ``counting`` below it; nothing here writes the output folder.
"""
