// Package models embeds a trimmed copy of the OpenAPI (swagger 2.0)
// documents of azure-rest-api-specs that describe the operations the Azure
// simulator serves, the simulator's manifest binding each of its operations
// to one of them, and the models written from Microsoft's documentation
// where no OpenAPI document exists (documented/). README.md names the
// source files and commits; trim.go regenerates the copy from a checkout.
package models

import "embed"

// FS holds manifest.json, specification/ and documented/.
//
//go:embed manifest.json specification documented
var FS embed.FS
