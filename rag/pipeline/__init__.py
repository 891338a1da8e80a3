"""A document's way from upload to complete: the stages (`stages`), the queue and its worker (`worker`),
questions before enrichment (`priority`), and the progress shown while it reads (`progress`)."""
