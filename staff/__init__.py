"""The staff memory dashboard: review, correct, re-summarise, audit and export what the app
remembers about each user. Staff only (``is_staff``); see ``access.staff_required``."""
