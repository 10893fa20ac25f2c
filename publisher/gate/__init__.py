"""The gate: agent records, report claims, assembly, the one pipeline of checks over a run,
its verdict and the rendered report."""
