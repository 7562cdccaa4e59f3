"""The memory search, as callers have always imported it (``memory.search`` holds it)."""

from memory.search import Hit, search
from memory.search.terms import query_terms

__all__ = ["Hit", "query_terms", "search"]
