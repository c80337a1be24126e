package research

// extractionVersion names what the extractors make of a file: the text of
// HTML, Markdown, plain text, PDF and media files as the corpus indexes
// it. Bump it whenever a change to any extractor (or to Limits, or to the
// reflow of PDF text) changes what text an unchanged file yields. The
// persistent corpus index records it (indexMeta); an index built under
// another version is removed and rebuilt when a worker opens it, so its
// passages are those of the running code and not of the one that built
// it. The corpus fingerprint (paths, sizes, mtimes) cannot say this: it
// only decides which files an update extracts again, and an upgrade
// changes no file. Vectors are cached by passage text, so a rebuild embeds
// only the passages whose text changed.
//
//	0  indexes written before the version was recorded
//	1  PDF running headers and footers dropped (pdf_running.go)
//	2  PDF text read raw from pdftotext's <pre>, not parsed as HTML
//	   (parsePdftotextHTML: "<" in the text had swallowed passages)
//	3  PDF contents pages (table of contents, lists of tables and
//	   figures) dropped (pdf_contents.go)
const extractionVersion = 3
