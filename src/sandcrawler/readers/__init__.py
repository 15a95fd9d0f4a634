"""Readers of the system's own records: one ``Reader`` interface (``base``), over SQL
(``sql``) or the PostgREST API (``postgrest``); ``Services.reader`` picks one."""
