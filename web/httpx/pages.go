package httpx

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// pageCSS is the one stylesheet of the public pages. It is inline and
// allowed by its hash, so the pages load nothing else and run no script.
const pageCSS = `body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2328;background:#f6f8fa;line-height:1.5}
main{max-width:860px;margin:0 auto;padding:24px 16px 64px}
header.brand{background:var(--brand,#0b5cad);color:#fff;padding:20px 16px}
header.brand div{max-width:860px;margin:0 auto}
header.brand h1{margin:0;font-size:1.6rem}
header.brand img{max-height:40px;vertical-align:middle;margin-right:12px;background:#fff;border-radius:4px}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;margin:16px 0}
h2{font-size:1.2rem;margin-top:0}
.q+h2{margin-top:28px}
label{display:block;font-weight:600;margin:12px 0 4px}
textarea,input[type=text],input[type=email]{width:100%;box-sizing:border-box;padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit}
textarea{min-height:72px}
.q{border-top:1px solid #eaeef2;padding-top:8px}
.hint{color:#57606a;font-size:.9rem}
.notice{background:#ddf4ff;border:1px solid #54aeff;padding:12px 16px;border-radius:6px}
.error{background:#ffebe9;border:1px solid #ff8182;padding:12px 16px;border-radius:6px}
button{font:inherit;padding:8px 16px;border-radius:6px;border:1px solid #1f883d;background:#1f883d;color:#fff;cursor:pointer;margin-right:8px}
button.secondary{background:#f6f8fa;color:#1f2328;border-color:#8c959f}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eaeef2}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:.85rem;background:#eaeef2}
.ok{background:#dafbe1}
code{word-break:break-all}
pre{white-space:pre-wrap;font:inherit;background:#f6f8fa;padding:12px;border-radius:6px}`

// pageCSP allows exactly the page's stylesheet, images, and forms posting
// back to the appliance.
func pageCSP(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

var colorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

const LayoutHTML = `{{define "layout"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title><style>{{.CSS}}</style></head>
<body>
<header class="brand"><div>{{if .Logo}}<img src="{{.Logo}}" alt="">{{end}}<h1>{{.Heading}}</h1></div></header>
<main>{{template "content" .}}</main></body></html>{{end}}`

// page is the data every public page gets.
type Page struct {
	Title   string
	Heading string
	Color   string
	Logo    string
	CSS     template.CSS
	Data    any
}

var messageTpl = template.Must(template.New("message").Parse(LayoutHTML + `{{define "content"}}<section>
<div class="{{if .Data.Error}}error{{else}}notice{{end}}"><p>{{.Data.Message}}</p></div></section>{{end}}`))

// renderPage writes an HTML page with the page CSP.
func RenderPage(w http.ResponseWriter, status int, t *template.Template, p Page) error {
	css := pageCSS
	if colorRe.MatchString(p.Color) {
		css += "\n:root{--brand:" + p.Color + "}"
	}
	p.CSS = template.CSS(css)
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP(css))
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// renderMessage writes a page holding one message.
func RenderMessage(w http.ResponseWriter, status int, title, msg string, isErr bool) error {
	return RenderPage(w, status, messageTpl, Page{Title: title, Heading: title,
		Data: struct {
			Message string
			Error   bool
		}{msg, isErr}})
}

// crossSite reports whether a form post came from another site. Browsers
// say so in Sec-Fetch-Site, which is trusted when present (a reverse proxy
// may rewrite Host, so comparing Origin with Host alone would refuse real
// visitors). Without it, Origin must name this host or the public URL's.
func (s *Server) CrossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "":
	default:
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || o == "null" {
		return true
	}
	if strings.EqualFold(u.Host, r.Host) {
		return false
	}
	if pu, err := url.Parse(s.opts.PublicURL); err == nil && s.opts.PublicURL != "" && strings.EqualFold(u.Host, pu.Host) {
		return false
	}
	return true
}
