package ui

import (
	"testing"
)

// TestBrandContrast: the header text picked for a brand colour meets WCAG
// AA (4.5:1) on every colour of a 16-step grid, white on dark colours,
// near-black on light ones, black where neither reaches AA.
func TestBrandContrast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bg, want string
	}{{"#0b3d91", "#ffffff"}, {"#000000", "#ffffff"}, {"#ffcc00", "#1f2328"}, {"#ffffff", "#1f2328"}, {"#808080", "#000000"}} {
		bg, ok := parseHexColor(c.bg)
		if !ok {
			t.Fatalf("%s not parsed", c.bg)
		}
		if got := textOn(bg).String(); got != c.want {
			t.Errorf("text on %s: %s, want %s (white %.2f, near-black %.2f)", c.bg, got, c.want, contrast(colorWhite, bg), contrast(colorNearBlack, bg))
		}
	}
	worst := 21.0
	for r := 0; r < 256; r += 17 {
		for g := 0; g < 256; g += 17 {
			for b := 0; b < 256; b += 17 {
				bg := rgb{uint8(r), uint8(g), uint8(b)}
				if k := contrast(textOn(bg), bg); k < worst {
					worst = k
				}
			}
		}
	}
	if worst < wcagAA {
		t.Fatalf("worst header contrast %.2f, below AA", worst)
	}
	if k := contrast(colorWhite, colorBlack); k < 20.9 || k > 21.01 {
		t.Fatalf("contrast of white and black %.2f, want 21", k)
	}
	for _, bad := range []string{"", "red", "#fff", "#12345g", "#1234567", "#12 345", "#-12345", "url(x)", "#12345}", "#+1+2+3"} {
		if _, ok := parseHexColor(bad); ok {
			t.Errorf("%q accepted as a colour", bad)
		}
	}
}
