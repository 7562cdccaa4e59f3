"""Staff pages: thin function views. Each checks access (``web.access.staff_required``), reads
through ``staff.selectors``, writes through the apps' services (``memory.services``,
``profiles.services``, which hold the domain rules) or ``staff.services`` (staff-only actions),
and renders one template that serves both the page and its HTMX fragments
(``web.fragments``, ``{% partialdef %}``)."""
