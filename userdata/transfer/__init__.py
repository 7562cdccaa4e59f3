"""One user's data as a portable JSON document, and back (the right of access and portability).

The document holds no database ids: objects are named by references ("c1", "m12", "f3") in a
fixed order (creation time, then id), and every link between them uses those references. So an
export, a deletion, an import and a second export give the same document (``exported_at`` aside).
See ``export.user_data_export`` and ``importer.user_data_import``.
"""

FORMAT = "memorychat-user-export"
VERSION = 1
