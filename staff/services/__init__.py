"""Writes the staff pages make. Each takes keyword-only arguments, runs in one transaction and
records who did it: the acting staff member is set as the history user of every record it
changes (django-simple-history), whether or not a request is in flight."""
