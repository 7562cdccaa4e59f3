"""The one place that talks to a model.

``clients`` builds the OpenAI-compatible clients (one sync factory for background jobs, one
async factory for replies); ``providers`` streams replies (a real server, or the offline
provider when no key is set); ``errors`` turns transport failures into words for the page.

``OFFLINE_MODEL`` is the ``model`` stored on replies the offline provider wrote: code that must
skip the app's own replies (indexing, extraction) checks that, never the reply's words.
"""

from django.conf import settings

OFFLINE_MODEL = "offline"


def model_configured() -> bool:
    """True when a model server is configured; otherwise replies and jobs run offline."""
    return bool(settings.OPENAI_API_KEY)
