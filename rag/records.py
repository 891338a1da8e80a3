"""Typed records that cross module borders: documents, fragments, hits, citations."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rag.text import cell_number

Modality = Literal["text", "table", "image_caption"]
MODALITIES: tuple[Modality, ...] = ("text", "table", "image_caption")
MODALITY_NAMES = {"text": "text", "table": "table", "image_caption": "figure", "auto": "auto-routed"}

BBox = tuple[float, float, float, float]
LAST_PAGE = -1  # "the last page", where a page number is asked for


class Cell(BaseModel):
    """One table cell as ingestion read it: its column's header ("" where the column has none or repeats the
    last), the value as printed, and the number and unit in it when the value is one ("4.2 MW" → 4.2, "MW";
    a unit the header states in brackets, "Revenue ($ millions)", when the value has none)."""

    header: str = ""
    value: str
    number: float | None = None
    unit: str = ""

    @classmethod
    def read(cls, header: str, value: str) -> Cell:
        number, unit = cell_number(header, value)
        return cls(header=header, value=value, number=number, unit=unit)

    @property
    def line(self) -> str:
        return f"{self.header}: {self.value}" if self.header else self.value


def cells_text(cells: list[Cell]) -> str:
    """A row as one line, "Header: value | value | Header: value": how it is embedded, shown and read."""
    return " | ".join(c.line for c in cells)


class Fragment(BaseModel):
    """One searchable piece of a PDF: a paragraph, a table row or a figure caption."""

    id: str
    doc_id: str
    file: str
    page: int = Field(ge=1, description="1-based page number")
    modality: Modality
    bbox: BBox
    text: str
    extra: dict[str, str | int | float] = Field(default_factory=dict)
    cells: list[Cell] = Field(default_factory=list, description="a table row's cells; empty for other fragments")


class Inked(BaseModel):
    """Words a page prints in a colour, or on a coloured ground (a filled box, a highlight): the colour is data,
    named as a reader would name it."""

    page: int = Field(ge=1)
    colour: str  # red | orange | yellow | green | blue | purple | pink | brown | grey | black | white
    ground: bool = Field(False, description="the colour is the words' background, not their ink")
    text: str
    bbox: BBox


class PageColours(BaseModel):
    """A page's coloured words; a page without a text layer (a scan, a slide read by OCR) has none that can be read."""

    page: int = Field(ge=1)
    runs: list[Inked] = Field(default_factory=list)


class ChartInfo(BaseModel):
    """What makes a Table a chart's values: the figure it was read from and how sure the reading is."""

    figure_id: str
    title: str = ""
    kind: str = "bar"  # bar | stacked bar | line | dot | pie
    ambiguous: bool = False  # some data labels could not be paired: they are not in the rows
    source: Literal["vector", "ocr"] = "vector"


class Table(BaseModel):
    """A whole table, kept so later steps can compute on it, not only search its rows.

    A chart's values are a Table too: one row per category, one column per series, `chart` set."""

    table_id: str
    page: int
    bbox: BBox
    header: list[str]
    rows: list[list[str]]
    title: str = Field("", description="its caption (\"Table 3: …\") or the line over it")
    chart: ChartInfo | None = None

    def to_dataframe(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=_unique(self.header))


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        n = seen.get(name, 0)
        seen[name] = n + 1
        out.append(name if n == 0 else f"{name}.{n}")
    return out


StatementKind = Literal["balance_sheet", "income_statement", "cash_flows", "equity", "other", "sentence"]
Scale = Literal["thousand", "million", "billion"]
SCALES: dict[str, float] = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


class Period(BaseModel):
    """A statement's column: its header as printed ("January 28, 2023", "Fiscal 2019", "2019") and the fiscal
    year it is, where it names one."""

    header: str
    year: int | None = None


class StatementRow(BaseModel):
    """One line of a statement: its label as printed (a wrapped label joined), the headings above it, and a
    value per period (None where the column is empty or prints a dash); `cells` as printed, "$" dropped."""

    label: str
    section: list[str] = Field(default_factory=list)
    values: list[float | None]
    cells: list[str]
    per_share: bool = False  # a per-share figure: the statement's scale does not apply to it


class StatementFrame(BaseModel):
    """A table of figures by period read off one page's text layer: a financial statement, another table
    whose columns are fiscal years, or a sentence that prints a figure per year (one row,
    rag/ingest/sentences.py). `context` is the header text over all columns ("Year ended December 31,")."""

    doc_id: str
    file: str
    page: int = Field(ge=1, description="1-based page number")
    title: str
    kind: StatementKind = "other"
    periods: list[Period]
    rows: list[StatementRow]
    scale: Scale | None = None
    currency: str | None = None
    context: str = ""

    def to_dataframe(self, printed: bool = False):
        """Rows × period headers (the values, or the cells as printed), the section path as a column."""
        import pandas as pd

        data = {"section": [" › ".join(r.section) for r in self.rows], "label": [r.label for r in self.rows]}
        for n, header in enumerate(_unique([p.header or f"column {i + 1}" for i, p in enumerate(self.periods)])):
            data[header] = [r.cells[n] if printed else r.values[n] for r in self.rows]
        return pd.DataFrame(data)


class ParsedDocument(BaseModel):
    """What the ingest step hands to the store."""

    doc_id: str
    file: str
    pages: int
    fragments: list[Fragment]
    tables: list[Table] = Field(default_factory=list)
    frames: list[StatementFrame] = Field(default_factory=list, description="statements read off the text layer")
    page_texts: dict[int, str] = Field(
        default_factory=dict, description="page → what a model reads of it: reading order, tables as Header: value rows")
    search_texts: dict[int, str] = Field(
        default_factory=dict, description="page → its text layer in reading order, for page search")
    page_labels: dict[int, str] = Field(default_factory=dict, description="page → the number printed on it")
    empty_pages: list[int] = Field(default_factory=list)
    bad_pages: list[int] = Field(default_factory=list)
    ocr_pages: list[int] = Field(default_factory=list)
    unread_pages: list[int] = Field(default_factory=list, description="pages a text-layer read left for OCR")
    warnings: list[str] = Field(
        default_factory=list, description='what failed, and why: "page 12: table extraction failed (…)"')
    timings: dict[str, float] = Field(default_factory=dict)

    def add(self, part: ParsedDocument) -> None:
        """Take in what was parsed of some of this document's pages."""
        self.fragments += part.fragments
        self.tables += part.tables
        self.frames += part.frames
        self.page_texts.update(part.page_texts)
        self.search_texts.update(part.search_texts)
        self.page_labels.update(part.page_labels)
        for name in ("empty_pages", "bad_pages", "ocr_pages", "unread_pages", "warnings"):
            getattr(self, name).extend(getattr(part, name))
        for step, seconds in part.timings.items():
            self.timings[step] = self.timings.get(step, 0.0) + seconds

    def counts(self) -> dict[str, int]:
        return {m: sum(f.modality == m for f in self.fragments) for m in MODALITIES}


Stage = Literal["indexing", "searchable", "vectors", "complete"]
STAGES: tuple[Stage, ...] = ("indexing", "searchable", "vectors", "complete")
# What is left to read on a page: its OCR (a scan), its tables, charts and figures, or nothing.
UNREAD, TEXT_ONLY, DONE = "u", "t", "c"
_LEFT = {UNREAD: "OCR", TEXT_ONLY: "tables, charts"}


class DocumentInfo(BaseModel):
    """A document as the store's registry knows it. Each stage leaves it answerable: `searchable` (its text
    layer, by keyword), `vectors` (its text embedded: hybrid search), `complete` (tables, charts, OCR and
    figures too). `page_states` holds a letter per page: UNREAD, TEXT_ONLY or DONE."""

    doc_id: str
    file: str
    pages: int
    fragments: dict[str, int]
    stage: Stage = "complete"
    page_states: str = ""
    error: str | None = None  # why its enrichment stopped: it keeps the stage it reached
    warnings: list[str] = Field(default_factory=list)  # what failed on its pages
    notes: list[str] = Field(default_factory=list)  # how it was read ("3 pages read with OCR …")
    stage_seconds: dict[str, float] = Field(default_factory=dict, description="stage → seconds from its ingest's start")
    version: int = 0  # changes when its searchable words change: the key of the keyword indexes
    embed_model: str = ""
    added_at: float = 0.0
    owner: str = ""

    @property
    def visible(self) -> bool:
        return self.stage != "indexing"

    @property
    def done_pages(self) -> int:
        return self.page_states.count(DONE) if self.stage != "complete" else self.pages

    def pages_left(self, state: str | None = None) -> list[int]:
        """Pages still to read (of one state, or of any); none once complete."""
        if self.stage == "complete":
            return []
        return [n for n, s in enumerate(self.page_states, 1) if s != DONE and (state is None or s == state)]

    def still_reading(self) -> str:
        """One line on what is not read yet: "pages 40–73 are still being read (tables, charts)"."""
        left = self.pages_left()
        if not left:
            return ""
        what = ", ".join(_LEFT[s] for s in (UNREAD, TEXT_ONLY) if self.pages_left(s))
        one = len(left) == 1
        return f"{'page' if one else 'pages'} {page_ranges(left)} of {self.file} {'is' if one else 'are'} still being read ({what})"


def page_ranges(pages: list[int]) -> str:
    """1, 2, 3, 5 → "1–3, 5"."""
    runs: list[list[int]] = []
    for p in sorted(pages):
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


class Hit(BaseModel):
    """A fragment found by a search, with its cosine similarity.

    `rank` orders hits: the cosine for a dense search, the fused reciprocal-rank score when
    BM25 or page ranking took part (a different scale, so never shown as a similarity).
    """

    fragment: Fragment
    score: float
    collection: Modality
    rank: float | None = None

    @property
    def order(self) -> float:
        return self.score if self.rank is None else self.rank


class Citation(BaseModel):
    """A page an answer cites, boxed where the fragment that reads most like the answer's line stands."""

    file: str
    doc_id: str = ""
    page: int
    fragment_id: str | None = None
    bbox: BBox | None = None
    evidence: str = ""  # "p. 5"
    text: str = ""  # the answer's line it backs


class SearchResult(BaseModel):
    """One retrieval call: the route taken, the merged hits and where the time went."""

    query: str
    route: list[str]  # the modalities searched, or another source ("outline", "plain text", "gold pages")
    hits: list[Hit]
    per_collection: dict[str, list[Hit]] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)


class IngestReport(BaseModel):
    """The outcome of ingesting one file, as the CLI and the upload page show it."""

    doc_id: str = ""
    file: str
    pages: int = 0
    fragments: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0
    outcome: Literal["ingested", "skipped", "error"]
    stage: Stage | None = None  # how far the document got: "searchable" while the rest is read in the background
    stage_seconds: dict[str, float] = Field(default_factory=dict)
    error: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # how it was read (OCR), not problems
    ocr_pages: list[int] = Field(default_factory=list)
