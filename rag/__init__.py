"""Multimodal RAG over PDF reports: ingest → store → retrieve → agent → trace."""
