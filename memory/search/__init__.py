"""Memory search: everything about the index of a user's memory lives here.

- ``schema``: the trigger-maintained full-text table and which rows and statuses it holds;
- ``terms``: query words, stems and the dates a query names;
- ``index``: per-user statistics and candidates (the only reads of the index), its upkeep;
- ``ranking``: ``search()``, relevance first (``Hit``);
- ``exchange``: a message hit's neighbours;
- ``relevance``: how much of the query a hit holds, absolute (``Hit.relevance``);
- ``embeddings``: vectors, computed locally or by an OpenAI-compatible endpoint;
- ``staff``: the staff lists' search;
- ``erase``: an erased account's last rows.
"""

from memory.search.index import tidy
from memory.search.ranking import Hit, search

__all__ = ["Hit", "search", "tidy"]
