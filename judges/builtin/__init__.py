"""The three judges the seeds describe; each is a verdict module named by its judge.toml."""
