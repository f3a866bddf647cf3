"""The commands: `python -m judges derive | report | baseline | finale` (also `judges ...`).

They sit on top of the stage packages and share their storage and report code with the
pytest layer; nothing below imports them.
"""
