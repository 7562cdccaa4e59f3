from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self):
        # The current system prompt is cached (memory.selectors): any save or delete of a
        # version, from the admin or elsewhere, clears it.
        from django.db.models.signals import post_delete, post_save

        from memory.models import SystemPrompt
        from memory.selectors import system_prompt_forget

        def forget(**kwargs):
            system_prompt_forget()

        post_save.connect(forget, sender=SystemPrompt, dispatch_uid="system-prompt-cache")
        post_delete.connect(forget, sender=SystemPrompt, dispatch_uid="system-prompt-cache-del")
