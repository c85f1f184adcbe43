"""Cards: the YAML files with their positions, config resolution, loading, import and published figures.

Imports only ``counting`` (the families a card names, and their rules) below it.
"""
