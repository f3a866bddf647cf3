"""Power and planning: what a set can detect and what it needs. Imports `estimates`,
`reliability` and `regression`; never `fitness`. The power formulas themselves are
`judges.stats.estimates.power`.

- `categories`: what each defect category's paired gate can see, from the recorded flips
- `simulation`: simulated runs through the gates' tests: false-fail rate and power
- `set_sizes`: entry point of `python -m judges plan`: items, repeats and labels a drop needs
"""
