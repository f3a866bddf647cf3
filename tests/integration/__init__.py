"""Integration tests of the pytest plugin: pytester projects against a fake judge server."""
