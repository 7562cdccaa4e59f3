"""The staff lists' full-text search lives with the index: ``memory.search.staff``."""

from memory.search.staff import search_filter, search_terms

__all__ = ["search_filter", "search_terms"]
