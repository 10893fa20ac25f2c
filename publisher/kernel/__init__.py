"""The evidence kernel: reason codes, errors, canonical JSON, careful file I/O, records, spans,
the content-addressed snapshot store and the hash-chained event log.

It knows nothing of runs, gates or wikis; every layer above builds on it.
"""
