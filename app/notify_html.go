package app

import (
	"html/template"
	"strings"
)

// The HTML part of notification mail: the same words as the text part,
// escaped by html/template, styled inline (mail clients drop style sheets)
// and without images or anything loaded from elsewhere.

type notificationItem struct {
	Subject, Body, Link string
}

var notificationTemplate = template.Must(template.New("notification").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Title}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1f2328;line-height:1.5">
<div style="max-width:600px;margin:0 auto;background:#ffffff;border:1px solid #d0d7de;border-radius:6px;padding:24px">
<h1 style="font-size:18px;margin:0 0 16px">{{.Title}}</h1>
{{range .Items}}<div style="border-top:1px solid #d0d7de;padding:12px 0">
{{if gt (len $.Items) 1}}<p style="margin:0 0 4px;font-weight:600">{{.Subject}}</p>{{end}}
<p style="margin:0 0 8px">{{.Body}}</p>
{{if .Link}}{{if .Absolute}}<p style="margin:0"><a href="{{.Link}}" style="color:#0969da">Open in the compliance appliance</a></p>{{else}}<p style="margin:0;color:#57606a">In the compliance appliance: {{.Link}}</p>{{end}}{{end}}
</div>{{end}}
<p style="margin:16px 0 0;font-size:12px;color:#57606a">{{.Footer}}</p>
</div></body></html>
`))

type notificationHTMLItem struct {
	notificationItem
	Absolute bool
}

// notificationHTML renders the HTML part of a notification or digest.
func notificationHTML(title string, items []notificationItem) string {
	view := struct {
		Title, Footer string
		Items         []notificationHTMLItem
	}{Title: title, Footer: notificationFooter}
	for _, it := range items {
		// Only an absolute http(s) link becomes a link; a bare path (no
		// public_url) is shown as text.
		abs := strings.HasPrefix(it.Link, "https://") || strings.HasPrefix(it.Link, "http://")
		view.Items = append(view.Items, notificationHTMLItem{it, abs})
	}
	var b strings.Builder
	if err := notificationTemplate.Execute(&b, view); err != nil {
		return "" // the text part still goes
	}
	return b.String()
}
