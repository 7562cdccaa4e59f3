"""Writes only the staff pages make (edits, deletes and restores of memories, erasure, import,
re-summarise); writes the apps share are their own services (``memory.services``,
``profiles.services``). Each takes keyword-only arguments, runs in one transaction and records
who did it: the acting staff member is set as the history user of every record it changes
(django-simple-history, through ``audit``), whether or not a request is in flight."""
