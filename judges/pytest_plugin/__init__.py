"""The pytest layer: options, hooks, fixtures and the session that owns a run.

Only this package (and `judges.calls._vcr`, behind the cassette facade
`judges.calls.cassettes`) imports pytest, xdist or vcrpy; the stage
packages below it (calls, core, sets, stats, reports, builtin) know nothing of pytest.
"""
