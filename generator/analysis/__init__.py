"""Analysis: what is read off counted cards: claims checked, checkpoint names, the calculator export.

Imports ``cards`` and ``counting`` below it; nothing here renders a page.
"""
