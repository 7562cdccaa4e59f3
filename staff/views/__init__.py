"""Staff pages: thin function views. Each checks access (``staff_required``), reads through
``staff.selectors``, writes through ``staff.services`` and renders one template that
serves both the page and its HTMX fragments (``{% partialdef %}``)."""
