"""Building blocks that several families compose: mechanisms written once, with what varies as parameters.

- ``relative``: relative-position attention (DeBERTa's disentangled attention, MPNet's bucketed bias);
- ``rotary``: rotary position tables that attention multiplies its query and key by;
- ``gated``: gated feed-forward layers (GeGLU, SwiGLU), fused or split;
- ``prenorm``: pre-LayerNorm layers, where each sub-layer reads its own norm's output;
- ``rmsnorm``: RMSNorm, a scale over the input divided by its root mean square;
- ``factorized``: E-wide embedding tables projected to the hidden size H;
- ``padded``: a block run on a padded length, a polynomial in step symbols (``step_symbols.py``).

Each returns the vocabulary of ``architecture.py`` (modules, ops, blocks), never a family:
this package declares no ``FAMILY``, so the registry passes over it.
"""
