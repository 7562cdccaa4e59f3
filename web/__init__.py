"""Helpers shared by the apps' views (chat, profiles, staff): access checks that answer HTMX
requests properly, and one way to render a page or its fragments. No models, not an app."""
