// Package research holds the Temporal-free building blocks of the research
// loop (DESIGN.md §7): search providers, document extraction, chunking, the
// goal-ranked URL queue, query dedup, evidence strength and the URL safety
// policy. The WebResearch activities (Discover, Fetch, Transcribe, Ingest)
// call into this package; nothing here imports Temporal, a graph store or
// the model client, and nothing here holds global state.
//
// Pieces and where they are used:
//
//   - Provider (Discover): Search(query) → []Hit. The local corpus (Corpus:
//     BM25 over HTML, Markdown, text, PDF and media files) and SearXNG
//     (SearXNG: the JSON API, paging, backoff on 429/5xx).
//   - Fetcher (Fetch): Fetch(url) → Document. Corpus for corpus:/// URLs;
//     Browser (headless Chromium via chromedp: a browser context per batch,
//     a bounded set of tabs, request interception and an egress proxy that
//     enforce the URLPolicy, media capture from network events) and
//     HTTPFetcher (policy-checked plain HTTP: PDFs through PDFConverter,
//     media downloads, pages when no browser) for http(s). Extractor turns
//     the raw bytes of one document into a Document; extractors are chosen
//     by file extension (corpus) or media type (fetchers).
//   - Transcriber (Transcribe): media → 16 kHz mono WAV (ffmpeg) →
//     whisper.cpp /inference (WhisperClient).
//   - Chunk (Ingest): paragraph-group chunking; Strength for the persisted
//     evidence strength (content-hash dedup uses graph.ContentHash).
//   - RankCandidates / NormalizeURL (the WebResearch workflow): pure,
//     deterministic ordering of the URL queue by goal cosine.
//   - QueryKey / IsDuplicateQuery (the query-dedup activity).
//   - URLPolicy (every fetcher): scheme, length and address checks against
//     SSRF (addrClass: IANA's special-purpose registries).
//   - Limits (every extractor, fetcher and provider, and Ingest again):
//     bounds on what a page controls — title, URL, text; child processes
//     (pdftotext, ffmpeg) run capped (runChild); SelectChunks bounds what
//     Ingest embeds per page.
package research
