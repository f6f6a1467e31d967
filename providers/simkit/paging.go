package simkit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
)

// pageToken is an opaque page token: the offset of the next item and a
// fingerprint of the query, so that a token only continues the query that
// issued it.
type pageToken struct {
	Offset int    `json:"o"`
	Query  string `json:"q"`
}

// EncodeToken returns the opaque token that continues query at offset.
func EncodeToken(offset int, query string) string {
	b, _ := json.Marshal(pageToken{Offset: offset, Query: query})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeToken returns the offset a token continues query from; "" starts at
// 0. It is false for a malformed token and for one another query issued.
func DecodeToken(tok, query string) (int, bool) {
	if tok == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	var t pageToken
	if json.Unmarshal(b, &t) != nil || t.Query != query || t.Offset < 0 {
		return 0, false
	}
	return t.Offset, true
}

// Page cuts items [offset, offset+size) of n and says where the next page
// starts (-1 when this is the last).
func Page(n, offset, size int) (from, to, next int) {
	from = min(max(offset, 0), n)
	to = min(from+max(size, 0), n)
	next = -1
	if to < n {
		next = to
	}
	return from, to, next
}

// Fingerprint is a short stable hash of a query's parts (paging parameters
// left out), for EncodeToken and DecodeToken.
func Fingerprint(parts ...string) string {
	return hex.EncodeToString(Digest(parts...))[:16]
}

// Digest hashes parts into a stable byte string, for deterministic IDs.
func Digest(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		_, _ = io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}
