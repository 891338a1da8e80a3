"""Financial statements as data: the tables of figures by fiscal year on a page's text layer, read into
`StatementFrame`s (rows, periods, scale), fast enough for the searchable stage (no `find_tables`).

A page's words are grouped into lines; a line's trailing numbers are its cells ("(1,234)" → -1234, "—" → None,
"$" and footnote marks dropped), the words before them its label. Cells line up in columns by their right edge
(figures are right-aligned); a header line holds the columns' years ("2019", "Fiscal 2019", "January 28, 2023",
the date's other words stacked above it). Lines without figures are headings ("Current assets:") or the first
line of a wrapped label (the next line goes on in lower case, or this one ends on "of", "and", …). The title
above the header names the statement's kind. A page of figures without a header continues the statement of
the page before it.

A fiscal year is the year its column prints, also when the column is the date the year ended (Best Buy's
"January 28, 2023" is fiscal 2023), unless the document says otherwise ("fiscal 2022 ended January 28, 2023").

The steps, a module each: `lines` (words → lines, cells, columns), `headers` (the years and the periods),
`rows` (labels and the headings over them), `frames` (a page's statements, then the document's), `storage`
(one SQLite file per document).
"""

from rag.ingest.statements.frames import (
    document_frames,
    fiscal_year_shift,
    page_frames,
    pdf_frames,
    statement_kind,
)
from rag.ingest.statements.lines import cell_value
from rag.ingest.statements.storage import load_frames, save_frames

__all__ = ["cell_value", "document_frames", "fiscal_year_shift", "load_frames", "page_frames", "pdf_frames",
           "save_frames", "statement_kind"]
