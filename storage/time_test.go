package storage

import (
	"testing"
	"time"
)

// TestParseFixedTS agrees with time.Parse on the stored format and defers
// to it on anything else.
func TestParseFixedTS(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"2026-01-15T10:00:00.000Z", "1999-12-31T23:59:59.999Z", "2024-02-29T00:00:00.001Z",
		"2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-01-15T24:00:00.000Z", "2026-01-15 10:00:00.000Z",
		"2026-01-15T10:00:00Z", "2026-01-15T10:00:00.000+01:00", "", "x026-01-15T10:00:00.000Z"} {
		want, werr := time.Parse(timeFormat, s)
		got, ok := parseFixedTS(s)
		if ok != (werr == nil) || (ok && !got.Equal(want)) {
			t.Errorf("parseFixedTS(%q) = %v, %v; time.Parse = %v, %v", s, got, ok, want, werr)
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := 0; i < 1000; i++ {
		x := now.AddDate(0, 0, i*37-20000).Add(time.Duration(i) * 7919 * time.Second)
		if got := parseTS(ts(x)); !got.Equal(x) {
			t.Fatalf("round trip %v: %v", x, got)
		}
	}
}
