"""File plumbing every stage may use: atomic writes, folder locks, line-numbered JSONL."""
