"""What people read: `reports/<judge>/<version>/`, rebuilt from its results.jsonl.

Data flows one way: `sources` (spec, planted set, SME labels) and the rows -> `build` ->
`model` (data only) -> the renderers `markdown`, `charts` + `html`, and `render` (every file
by name) -> `folders` (results files) and `write` (write, or check against the disk) ->
`terminal` (summary lines). `metadata` is the run metadata kept out of committed files.
"""
