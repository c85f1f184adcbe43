"""Counting: the declaration language, the families, and every number derived from them.

The lowest layer of the generator: it imports nothing from ``cards``, ``analysis``, ``site`` or
``build``. A card reaches it only as ``inventory.Counted`` (a family, a head and a config).
"""
