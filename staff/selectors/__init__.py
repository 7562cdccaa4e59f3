"""Reads for the staff pages. Lists are annotated or prefetched so a page costs a fixed number
of queries whatever its length (the tests assert the counts)."""
