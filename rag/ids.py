"""Ids of fragments, pages and tables: made and read here, nowhere else.

An id starts with the first 16 hex digits of the document's hash, so that it is stable: re-ingesting
a document is idempotent and a citation stays valid across restarts.

    fragment  <doc>:<kind>:<page>:<n>     kind: text, table, image_caption (or plain: a page as one text)
    page      <doc>:page:<page>
    table     <doc>:t<page>:<n>           a chart's values: <doc>:c<page>:<n>
"""

from __future__ import annotations

_DOC_CHARS = 16


def doc_key(doc_id: str) -> str:
    """What of a document id its fragments' and pages' ids carry."""
    return doc_id[:_DOC_CHARS]


def fragment_id(doc_id: str, kind: str, page: int, n: int) -> str:
    return f"{doc_key(doc_id)}:{kind}:{page}:{n}"


def page_id(doc_id: str, page: int) -> str:
    return f"{doc_key(doc_id)}:page:{page}"


def table_id(doc_id: str, page: int, n: int, chart: bool = False) -> str:
    return f"{doc_key(doc_id)}:{'c' if chart else 't'}{page}:{n}"
