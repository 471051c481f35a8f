// Package embed holds the assets compiled into the binary: schema
// migrations, framework catalogs, the OpenAPI document and templates.
package embed

import "embed"

// Migrations are the forward-only schema migrations, NNNN_name.sql.
//
//go:embed migrations/*.sql migrations/postgres/*.sql
var Migrations embed.FS

// OpenAPI holds the OpenAPI 3.0 document: base.yaml plus one fragment of
// paths and schemas per resource group, merged when served.
//
//go:embed openapi/*.yaml
var OpenAPI embed.FS

// Frameworks holds the built-in framework catalogs (one JSON file per
// source), the cross-framework mappings and catalog.json, which lists the
// 16 built-in frameworks and the files each is made of.
//
//go:embed frameworks/*.json frameworks/mappings/*.json
var Frameworks embed.FS

// UI holds the web application: html/template pages under ui/templates and
// the stylesheet, script and icon under ui/static. Nothing is fetched from
// elsewhere, so the application works air-gapped.
//
//go:embed ui/templates/*.html ui/static/*
var UI embed.FS

// Training holds the built-in security-awareness training catalog: one JSON
// file per module with its sections, quiz, pass mark, version and the
// framework requirements it evidences.
//
//go:embed training/*.json
var Training embed.FS
