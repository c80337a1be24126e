package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// NormalizeContent is the canonical form used for content hashing: Unicode
// whitespace runs collapse to one space, leading and trailing whitespace is
// dropped, and letters are lower-cased.
func NormalizeContent(content string) string {
	return strings.ToLower(strings.Join(strings.Fields(content), " "))
}

// ContentHash is the dedup key of a piece of evidence: the hex SHA-256 of
// NormalizeContent(content). Every backend and the ingest code use it, so two
// texts that differ only in case or whitespace are the same evidence.
func ContentHash(content string) string {
	sum := sha256.Sum256([]byte(NormalizeContent(content)))
	return hex.EncodeToString(sum[:])
}
