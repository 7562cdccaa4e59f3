from django.conf import settings

from llm import model_configured


def llm_mode(request):
    """Tell every page whether replies come from a real model or the offline provider."""
    return {"llm_offline": not model_configured(), "llm_model": settings.OPENAI_MODEL}
