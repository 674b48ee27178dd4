"""The stages of a quantize run, in the order ``pipeline.py`` runs them; each is a function of ``QuantizeRun``."""
