// Package embed holds the assets compiled into the binary: schema
// migrations, framework catalogs, the OpenAPI document and templates.
package embed

import "embed"

// Migrations are the forward-only schema migrations, NNNN_name.sql.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// OpenAPI holds the OpenAPI 3.0 document: base.yaml plus one fragment of
// paths and schemas per resource group, merged when served.
//
//go:embed openapi/*.yaml
var OpenAPI embed.FS
