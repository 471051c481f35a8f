package httpx

import "strings"

// loggedPath is a request path as the access log writes it: the secret
// tokens of vendor questionnaire links and trust portal access links are
// replaced, so that a log never holds a working link.
func LoggedPath(p string) string {
	if !strings.Contains(p, "/vendor-questionnaire/") && !strings.HasPrefix(p, "/trust/") && !strings.HasPrefix(p, "/v1/trust-access/") {
		return p
	}
	trust := !strings.Contains(p, "/vendor-questionnaire/")
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		prev := segs[i-1]
		if segs[i] != "" && (prev == "vendor-questionnaire" || trust && (prev == "access" || prev == "nda")) {
			segs[i] = "[redacted]"
		}
	}
	return strings.Join(segs, "/")
}
