"""Readers of the judgements a team already logs, into the corpus format.

One module per tool (`tabular` for any JSONL or CSV by a column mapping, `inspect_log` for
Inspect's eval logs, `promptfoo` for promptfoo's output JSON, `mlflow_traces` for MLflow's
trace assessments, `otel` for OTLP JSON GenAI evaluation events; AlpacaEval's release is
read by `judges.corpus.alpaca_eval`), each returning `ImportedRows`; `corpus_writer` writes
them through the corpus's own checks.
`python -m judges corpus import FORMAT SOURCE` is the command (judges/cli/corpus.py).
"""

FORMATS = ("jsonl", "csv", "inspect", "promptfoo", "mlflow", "otel", "alpaca-eval")
