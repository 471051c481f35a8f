package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"io/fs"
	"path"
	"strings"
	"sync"

	assets "github.com/compliance-appliance/compliance/embed"
)

// uiTemplates are the parsed page templates and the content hashes of the
// static files. Both come from the embedded assets only, so one parse
// serves every Server of the process (tests start hundreds; parsing and
// cloning the templates was most of a server's start). Nothing changes
// them after the parse, and html/template executes concurrently.
type uiTemplates struct {
	pages  map[string]*template.Template
	assets map[string]string // file -> content hash
}

var parsedUI struct {
	once sync.Once
	t    *uiTemplates
	err  error
}

func loadUITemplates(static fs.FS) (*uiTemplates, error) {
	parsedUI.once.Do(func() { parsedUI.t, parsedUI.err = parseUITemplates(static) })
	return parsedUI.t, parsedUI.err
}

func parseUITemplates(static fs.FS) (*uiTemplates, error) {
	u := &uiTemplates{pages: map[string]*template.Template{}, assets: map[string]string{}}
	err := fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		u.assets[p] = hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, err
	}
	base, err := template.New("base").Funcs(uiFuncs).ParseFS(assets.UI, "ui/templates/_*.html")
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(assets.UI, "ui/templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if strings.HasPrefix(name, "_") {
			continue
		}
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if t, err = t.ParseFS(assets.UI, f); err != nil {
			return nil, err
		}
		u.pages[name] = t
	}
	return u, nil
}
