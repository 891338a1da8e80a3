"""`python -m rag` commands that search and answer: search, ask, plan, glossary, conversations."""

from __future__ import annotations

import asyncio
import json

from rag.cli.common import emit, retrieval_switches, workspace
from rag.settings import Settings


def register(sub) -> None:
    """The commands that search and answer: search, ask, plan, glossary, conversations."""
    p = sub.add_parser("search", help="multimodal search")
    p.add_argument("query")
    p.add_argument("--modality", default="auto", choices=["auto", "text", "table", "image_caption"])
    p.add_argument("-k", type=int, default=None, help="results per collection")
    p.add_argument("--doc", action="append", help="restrict to a document (repeatable)")
    p.add_argument("--json", action="store_true")
    retrieval_switches(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="ask the agent a question; hops print as they happen")
    p.add_argument("question")
    p.add_argument("--max-hops", type=int)
    p.add_argument("--doc", action="append", help="restrict to a document (repeatable)")
    p.add_argument("--json", action="store_true")
    retrieval_switches(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("plan", help="a question's plan: one fact, or the parts searched and read on their own and "
                                    "how code composes them")
    p.add_argument("question")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("glossary", help="the analysts' vocabulary: the statement rows their words name and the "
                                        "metrics defined once; with TERM, what it names")
    p.add_argument("term", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_glossary)

    p = sub.add_parser("conversations", help="the chat's saved conversations: list them, show or delete one")
    p.add_argument("action", nargs="?", choices=["list", "show", "delete"], default="list")
    p.add_argument("id", nargs="?", help="a conversation id (from the list, or the chat's ?conversation=)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_conversations)


def cmd_search(args, settings: Settings) -> int:
    ws = workspace(settings)
    doc_ids = [ws.store.resolve(d).doc_id for d in args.doc] if args.doc else None
    result = ws.search(args.query, modality=args.modality, k=args.k, doc_ids=doc_ids)
    payload = {
        "query": result.query,
        "route": result.route,
        "results": [
            {"id": h.fragment.id, "modality": h.fragment.modality, "file": h.fragment.file,
             "page": h.fragment.page, "score": round(h.score, 4), "text": h.fragment.text,
             "bbox": h.fragment.bbox}
            for h in result.hits
        ],
        "timings_ms": result.timings_ms,
    }
    lines = [f"route: {'+'.join(result.route)}   {result.timings_ms}"]
    lines += [
        f"{h.score:.3f}  {h.fragment.modality:13s} {h.fragment.file} p.{h.fragment.page}  {h.fragment.text[:100]}"
        for h in result.hits
    ]
    emit(args, payload, "\n".join(lines))
    return 0


def cmd_ask(args, settings: Settings) -> int:
    from rag.agent.printer import print_event

    if args.max_hops:
        settings.agent.max_hops = args.max_hops
    ws = workspace(settings)
    if not ws.store.documents():
        raise SystemExit("no documents yet: python -m rag ingest FILE.pdf")
    doc_ids = [ws.store.resolve(d).doc_id for d in args.doc] if args.doc else None
    result = ws.ask(args.question, doc_ids=doc_ids, on_event=None if args.json else print_event)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
    return 0


def cmd_plan(args, settings: Settings) -> int:
    """The plan `ask` follows; the model is loaded only when code cannot write the parts."""
    from rag.models.structured import ask_json
    from rag.reader.plan import planned
    from rag.reader.question import understand

    ws = workspace(settings)

    class Model:  # loaded at its first reply
        async def json(self, purpose, messages, schema_model, max_tokens, page=0):
            return await ask_json(ws.llm, messages, schema_model, max_tokens, purpose=purpose)

    plan = asyncio.run(planned(understand(args.question), Model()))
    lines = [f"{plan.composition} of {len(plan.parts)} parts, written by {plan.by}:"] + \
        [f"  {n}. {p.question}" for n, p in enumerate(plan.parts, 1)] if plan.parts else ["one fact: one read"]
    emit(args, plan.model_dump(), "\n".join(lines))
    return 0


def cmd_glossary(args, settings: Settings) -> int:
    """Every concept (statement, analysts' words, printed rows) and definition, or those a term names."""
    from rag.reader.definitions import DEFINITIONS, metrics_named
    from rag.reader.lookup import GLOSSARY, KIND_NAMES, concept_of

    concept = concept_of(args.term) if args.term else None
    concepts = {n: c for n, c in GLOSSARY.items() if not args.term or c is concept}
    metrics = {n: d for n, d in DEFINITIONS.items() if not args.term or n in metrics_named(args.term)}
    data = {"rows": {n: {"statement": KIND_NAMES[c.kind], "said": list(c.said), "printed": list(c.printed)}
                     for n, c in concepts.items()},
            "metrics": {n: {"said": list(d.said), "formula": d.formula} for n, d in metrics.items()}}
    lines = [f"{n} ({KIND_NAMES[c.kind]}): {'; '.join(c.printed)}" for n, c in concepts.items()] + \
        [f"{n} = {d.formula}" for n, d in metrics.items()]
    emit(args, data, "\n".join(lines) or f"no row or metric is named {args.term!r}")
    return 0 if lines else 1


def cmd_conversations(args, settings: Settings) -> int:
    from rag.ui.conversations import Conversations

    store = Conversations.of(settings)
    if args.action == "list":
        found = store.list(limit=-1)
        lines = [f"{c.id}  {c.turns:3d} question(s)  {c.title}" for c in found]
        emit(args, {"conversations": [c.model_dump() for c in found]}, "\n".join(lines) or "no conversations yet")
        return 0
    if not args.id or store.get(args.id) is None:
        raise SystemExit(f"no conversation {args.id!r}: python -m rag conversations")
    if args.action == "delete":
        store.delete(args.id)
        print(f"deleted conversation {args.id}")
        return 0
    turns = store.turns(args.id)
    lines = [f"Q{t.n}: {t.question}\nA{t.n} [{t.status}, run {t.run_id}]: {t.answer.answer if t.answer else t.error}\n"
             for t in turns]
    emit(args, {"id": args.id, "turns": [t.model_dump(mode="json") for t in turns]}, "\n".join(lines))
    return 0
