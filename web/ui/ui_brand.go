package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// The organization's branding colour inside the web application. Pages may
// not carry inline styles (style-src 'self'), so the colour comes in a
// small stylesheet of its own, /brand.css, linked from the layout only when
// the organization has a colour, with a version derived from its content
// so a changed colour is fetched again at once and an unchanged one is
// cached.

// uiBrandRoutes registers the organization's stylesheet.
func (s *Server) uiBrandRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/brand.css", uiSignedIn, s.uiBrandCSS)
}

// rgb is a colour parsed from #rrggbb.
type rgb struct{ r, g, b uint8 }

// parseHexColor accepts exactly #rrggbb (either case), the form the API
// stores; anything else is refused, so only a colour ever reaches a
// stylesheet.
func parseHexColor(s string) (rgb, bool) {
	if len(s) != 7 || s[0] != '#' {
		return rgb{}, false
	}
	var c [3]uint8
	for i := range c {
		n, err := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return rgb{}, false
		}
		c[i] = uint8(n)
	}
	return rgb{c[0], c[1], c[2]}, true
}

// String is the colour as #rrggbb, built from its numbers.
func (c rgb) String() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

// luminance is the relative luminance of WCAG 2.1.
func (c rgb) luminance() float64 {
	ch := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c.r) + 0.7152*ch(c.g) + 0.0722*ch(c.b)
}

// contrast is the WCAG 2.1 contrast ratio of two colours (1 to 21).
func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

var (
	colorWhite     = rgb{0xff, 0xff, 0xff}
	colorNearBlack = rgb{0x1f, 0x23, 0x28} // the pages' text colour
	colorBlack     = rgb{0, 0, 0}
)

// wcagAA is the contrast normal text needs (WCAG 2.1 1.4.3).
const wcagAA = 4.5

// textOn picks the text colour for a background: white or the pages'
// near-black, whichever contrasts more, if it reaches AA; else pure black
// or white, one of which always reaches it (at least 4.58:1).
func textOn(bg rgb) rgb {
	best := colorWhite
	if contrast(colorNearBlack, bg) > contrast(colorWhite, bg) {
		best = colorNearBlack
	}
	if contrast(best, bg) >= wcagAA {
		return best
	}
	if contrast(colorBlack, bg) > contrast(colorWhite, bg) {
		return colorBlack
	}
	return colorWhite
}

// brandCSS is the stylesheet of a colour: the header in the colour with
// text that keeps AA contrast, focus outlines in that text colour, and the
// current navigation item marked in the colour when it contrasts
// enough with the white sidebar (3:1 for non-text, WCAG 1.4.11).
func brandCSS(c rgb) string {
	fg := textOn(c)
	css := "/* The organization's brand colour. */\n" +
		".top{background:" + c.String() + ";color:" + fg.String() + "}\n" +
		".top a,.top label,.top .who{color:" + fg.String() + "}\n" +
		".top :focus-visible{outline-color:" + fg.String() + "}\n"
	if contrast(c, colorWhite) >= 3 {
		css += "nav.main a[aria-current=page]{border-left-color:" + c.String() + "}\n"
	}
	return css
}

// cssVersion is the cache-busting version of a stylesheet's content.
func cssVersion(css string) string {
	sum := sha256.Sum256([]byte(css))
	return hex.EncodeToString(sum[:6])
}

// brand returns the organization's stylesheet and its version, or "" when
// it has no (valid) colour.
func (s *Server) brand(ctx context.Context) (css, version string, err error) {
	o, err := s.app.GetOrganization(ctx)
	if err != nil {
		return "", "", err
	}
	if o.Branding.PrimaryColor == nil {
		return "", "", nil
	}
	c, ok := parseHexColor(*o.Branding.PrimaryColor)
	if !ok {
		return "", "", nil
	}
	css = brandCSS(c)
	return css, cssVersion(css), nil
}

// brandVersion is the version the layout links, or "" for no link.
func (s *Server) brandVersion(ctx context.Context) string {
	_, v, err := s.brand(ctx)
	if err != nil {
		return ""
	}
	return v
}

func (s *Server) uiBrandCSS(w http.ResponseWriter, r *http.Request, v *view) error {
	css, ver, err := s.brand(r.Context())
	if err != nil {
		return err
	}
	if css == "" {
		css = "/* The organization has no brand colour. */\n"
	}
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	// The content follows the organization of the session: private, and
	// kept for good only under the version of its content.
	if ver != "" && r.URL.Query().Get("v") == ver {
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	h.Set("Vary", "Cookie")
	h.Set("Content-Length", strconv.Itoa(len(css)))
	_, _ = w.Write([]byte(css))
	return nil
}
