"""Process-pool plumbing: every snapshot of a command read and verified once, on every core."""
