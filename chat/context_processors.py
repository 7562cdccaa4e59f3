from django.conf import settings


def llm_mode(request):
    """Tell every page whether replies come from a real model or the offline provider."""
    return {"llm_offline": not settings.OPENAI_API_KEY, "llm_model": settings.OPENAI_MODEL}
