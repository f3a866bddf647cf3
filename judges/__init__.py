"""judges: pin an LLM judge's behaviour down as pytest cases."""

__version__ = "0.1.0"
