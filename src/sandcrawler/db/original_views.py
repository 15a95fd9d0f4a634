"""The original system's relations as views over our tables (PostgreSQL; migration
0010): ``cdx``, ``file_meta``, ``grobid``, ``pdf_meta``, ``html_meta`` (and an
empty ``pdftrio``), with its
column names and types, so that its PostgREST client and the tools built on it
read them unchanged (docs/api.md, "The original system's relations";
docs/migration.md). Views, not copies: each row is what our tables hold now.

The PDF table's cells are decoded here as storage/pdftable.py writes them: ints
8-byte big-endian, strings UTF-8, JSON as UTF-8 JSON text. Only its small plain
columns are read (``grobid0:status``, ``pdf0:pdf_meta``, ``html0:html_meta``...);
the deflated ones (TEI, text) cannot be decoded in SQL, and the original kept
them out of its database too.
"""

from __future__ import annotations

from sandcrawler.db.schema import decoded_cell

#: a schema PostgREST does not serve (db/api.py's guard lives there too)
HELPER_SCHEMA = "sandcrawler_api"

#: a PDF date (``D:YYYYMMDDHHmmSS``, PDF 32000-1 7.9.4) as a time, null when it is
#: not one: the original stored the info dictionary's CreationDate as a time, and a
#: malformed date in one file must not fail a lookup of the view
PDF_DATE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {HELPER_SCHEMA}.pdf_date(raw text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF raw IS NULL OR raw !~ '^(D:)?\\d{{14}}' THEN
        RETURN NULL;
    END IF;
    RETURN to_timestamp(substring(regexp_replace(raw, '^D:', '') FROM 1 FOR 14),
                        'YYYYMMDDHH24MISS')::timestamp AT TIME ZONE 'UTC';
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$
"""


def _cells(family: str, columns: dict[str, str]) -> str:
    """A sub-query: one row per (table, file) that has ``family`` cells, with the
    ``columns`` (name -> decoding) and ``updated`` (the family's latest cell)."""
    decoded = ",\n            ".join(f"{decoded_cell(family, q, as_)} AS {q}"
                                     for q, as_ in columns.items())
    return f"""(
        SELECT
            t.name AS table_name,
            encode(c.row_key, 'hex') AS sha1hex,
            {decoded},
            max(c.updated) AS updated
        FROM pdftable_cells c
        JOIN pdftables t ON t.id = c.table_id
        WHERE c.family = '{family}'
        GROUP BY t.name, c.row_key
    )"""


# The original's cdx table held the captures of full texts it had archived: hits
# (200, or 226 for FTP) and revisits of them. Our web_cdx holds every capture, so
# redirects, errors and captures without a body hash are left out.
CDX_SELECT = """
    SELECT
        w.url AS url,
        w.datetime AS datetime,
        w.sha1hex AS sha1hex,
        NULL::text AS cdx_sha1hex,
        w.mimetype AS mimetype,
        w.warc_path AS warc_path,
        w.warc_csize AS warc_csize,
        w.warc_offset AS warc_offset,
        w.row_created AS row_created
    FROM web_cdx w
    WHERE w.sha1hex IS NOT NULL
        AND (w.status_code IN (200, 226) OR w.mimetype = 'warc/revisit')
"""

# One row per file: the hashes of a capture of it (the newest with all of them),
# else the PDF table's size and type of a file processed without being crawled
# (`sandcrawler process`), whose SHA-256 and MD5 nothing recorded.
FILE_META_SELECT = f"""
    SELECT DISTINCT ON (w.sha1hex)
        w.sha1hex AS sha1hex,
        w.sha256hex AS sha256hex,
        w.md5hex AS md5hex,
        w.size AS size_bytes,
        w.mimetype AS mimetype
    FROM web_cdx w
    WHERE w.sha1hex IS NOT NULL AND w.sha256hex IS NOT NULL AND w.status_code = 200
        AND w.mimetype IS DISTINCT FROM 'warc/revisit'
    UNION ALL
    SELECT DISTINCT ON (f.sha1hex)
        f.sha1hex, NULL::text, NULL::text, f.size, f.mime
    FROM {_cells("file", {"size": "bigint", "mime": "text"})} f
    WHERE NOT EXISTS (SELECT 1 FROM web_cdx w WHERE w.sha1hex = f.sha1hex
                      AND w.sha256hex IS NOT NULL AND w.status_code = 200
                      AND w.mimetype IS DISTINCT FROM 'warc/revisit')
"""

# GROBID's row. The embedded cascade's TEI, stored in grobid0 where GROBID is not
# run, is what our GROBID-compatible service answers with 200, so it is 200 here
# too; files never sent to either (status not-run) have no row, as in the
# original. ``metadata`` is the original's shape: the header's biblio (title,
# authors as name/given_name/surname, date, DOI) and its language_code.
GROBID_SELECT = f"""
    SELECT
        g.sha1hex AS sha1hex,
        g.updated AS updated,
        g.status ->> 'grobid_version' AS grobid_version,
        coalesce(g.status_code,
                 CASE WHEN g.status ->> 'status' = 'success' THEN 200 END)::int AS status_code,
        g.status ->> 'status' AS status,
        NULL::text AS fatcat_release,
        CASE WHEN g.metadata IS NOT NULL THEN jsonb_strip_nulls(jsonb_build_object(
            'biblio', jsonb_strip_nulls(jsonb_build_object(
                'title', g.metadata -> 'title',
                'authors', (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                                'name', a -> 'full_name', 'given_name', a -> 'given_name',
                                'surname', a -> 'surname')))
                            FROM jsonb_array_elements(
                                CASE jsonb_typeof(g.metadata -> 'authors')
                                WHEN 'array' THEN g.metadata -> 'authors'
                                ELSE '[]'::jsonb END) AS a),
                'date', g.metadata -> 'date',
                'doi', g.metadata -> 'doi')),
            'language_code', g.metadata -> 'language')) END AS metadata,
        g.table_name AS table_name
    FROM {_cells("grobid0", {"status_code": "bigint", "status": "jsonb",
                             "metadata": "jsonb"})} g
    WHERE g.status ->> 'status' IS DISTINCT FROM 'not-run'
"""

# The PDF's own metadata (PDFium, ``pdf0:pdf_meta``) as the original's pdf_meta
# row: its info dictionary's title, subject, author, creator and producer in
# ``metadata``, CreationDate as pdf_created; has_page0_thumbnail from the
# document's catalogued resources.
PDF_META_SELECT = f"""
    SELECT
        p.sha1hex AS sha1hex,
        p.updated AS updated,
        coalesce(p.pdf_status, p.pdf_meta ->> 'status') AS status,
        EXISTS (SELECT 1 FROM catalogue k
                WHERE k.sha1 = p.sha1hex
                AND k.resources::jsonb ?| ARRAY['thumb-small', 'thumb-medium',
                                                'thumb-large', 'thumb-listing'])
            AS has_page0_thumbnail,
        (p.pdf_meta ->> 'page_count')::int AS page_count,
        (p.pdf_meta ->> 'word_count')::int AS word_count,
        (p.pdf_meta ->> 'page0_height')::real AS page0_height,
        (p.pdf_meta ->> 'page0_width')::real AS page0_width,
        p.pdf_meta ->> 'permanent_id' AS permanent_id,
        {HELPER_SCHEMA}.pdf_date(p.pdf_meta -> 'info' ->> 'created') AS pdf_created,
        p.pdf_meta ->> 'pdf_version' AS pdf_version,
        nullif(jsonb_strip_nulls(jsonb_build_object(
            'title', p.pdf_meta -> 'info' -> 'title',
            'subject', p.pdf_meta -> 'info' -> 'subject',
            'author', p.pdf_meta -> 'info' -> 'author',
            'creator', p.pdf_meta -> 'info' -> 'creator',
            'producer', p.pdf_meta -> 'info' -> 'producer')), '{{}}'::jsonb) AS metadata,
        p.table_name AS table_name
    FROM {_cells("pdf0", {"pdf_status": "text", "pdf_meta": "jsonb"})} p
"""

# An HTML full text's processing (``html0``, written by file ingest). Its biblio
# is our HtmlBiblio, whose contrib_raw_names the original called contrib_names.
HTML_META_SELECT = f"""
    SELECT
        h.sha1hex AS sha1hex,
        h.updated AS updated,
        h.html_status AS status,
        h.html_meta ->> 'scope' AS scope,
        coalesce((h.html_meta ->> 'has_teixml')::boolean, false) AS has_teixml,
        coalesce((h.html_meta ->> 'has_thumbnail')::boolean, false) AS has_thumbnail,
        (h.html_meta ->> 'word_count')::int AS word_count,
        CASE WHEN jsonb_typeof(h.html_meta -> 'biblio') = 'object' THEN
            jsonb_strip_nulls((h.html_meta -> 'biblio') - 'contrib_raw_names'
                || jsonb_build_object('contrib_names',
                                      h.html_meta -> 'biblio' -> 'contrib_raw_names'))
            END AS biblio,
        nullif(h.html_meta -> 'resources', 'null'::jsonb) AS resources,
        h.table_name AS table_name
    FROM {_cells("html0", {"html_status": "text", "html_meta": "jsonb"})} h
"""

# We run no pdf_trio classifier: the relation is there, empty, so that the
# original client's get_pdftrio answers None (nothing known) instead of raising
# on a 404.
PDFTRIO_SELECT = """
    SELECT
        NULL::text AS sha1hex, NULL::timestamptz AS updated, NULL::int AS status_code,
        NULL::text AS status, NULL::text AS pdftrio_version, NULL::date AS models_date,
        NULL::real AS ensemble_score, NULL::real AS bert_score,
        NULL::real AS linear_score, NULL::real AS image_score
    WHERE false
"""

#: view -> its SELECT, in the order they are created
ORIGINAL_VIEWS = {
    "cdx": CDX_SELECT,
    "file_meta": FILE_META_SELECT,
    "grobid": GROBID_SELECT,
    "pdf_meta": PDF_META_SELECT,
    "html_meta": HTML_META_SELECT,
    "pdftrio": PDFTRIO_SELECT,
}
