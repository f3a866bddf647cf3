"""`python -m judges`: the commands live in `judges.cli`."""

from judges.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
