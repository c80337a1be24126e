// Package research holds the Temporal-free building blocks of the research
// loop (DESIGN.md §7): search providers, document extraction, chunking, the
// goal-ranked URL queue, query dedup, evidence strength and the URL safety
// policy. The WebResearch activities (Discover, Fetch, Transcribe, Ingest)
// call into this package; nothing here imports Temporal, a graph store or
// the model client, and nothing here holds global state.
//
// Pieces and where they are used:
//
//   - Provider (Discover): Search(query) → []Hit. The first implementation is
//     the local corpus (Corpus): a directory of HTML, Markdown and text files
//     searched with BM25. SearXNG slots in behind the same interface.
//   - Fetcher (Fetch): Fetch(url) → Document. Corpus implements it for
//     corpus:/// URLs; the browser and the PDF fetcher implement it later.
//     Extractor turns the raw bytes of one document into a Document;
//     extractors are chosen by file extension (corpus) or media type
//     (fetchers), so PDF and media extractors slot in without changing
//     callers.
//   - Chunk (Ingest): paragraph-group chunking; Strength for the persisted
//     evidence strength (content-hash dedup uses graph.ContentHash).
//   - RankCandidates / NormalizeURL (the WebResearch workflow): pure,
//     deterministic ordering of the URL queue by goal cosine.
//   - QueryKey / IsDuplicateQuery (the query-dedup activity).
//   - URLPolicy (every fetcher): scheme and address checks against SSRF.
package research
