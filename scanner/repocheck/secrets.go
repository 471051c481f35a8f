package repocheck

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// secretRule is one kind of credential recognised in a committed file.
type secretRule struct {
	ID    string
	Title string
	re    *regexp.Regexp
	// group is the submatch holding the value (0: the whole match).
	group int
	// minEntropy, when set, is the Shannon entropy in bits per character
	// the value must reach: a generic assignment of a word or a
	// placeholder is not a secret.
	minEntropy float64
	// Vector is the CVSS 3.1 base vector of a committed secret of this
	// kind: anyone who can read the repository holds the credential.
	Vector string
	// hints: the pattern runs only on a line containing one of them (in
	// lower case): a cheap filter that keeps the scan fast.
	hints []string
}

const (
	// A credential to a cloud account or a signing key: read and change
	// what it opens.
	vectorHighSecret = "CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:N"
	// A service token or a password assigned in code: what it opens is not
	// known, so confidentiality only.
	vectorSecret = "CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:N/A:N"
)

// secretRules are compiled in; each pattern is anchored on a fixed prefix
// the issuer documents, except the generic assignment, which needs a
// high-entropy value.
var secretRules = []secretRule{
	{ID: "repository.secret.aws_access_key", hints: []string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}, Title: "AWS access key id committed", re: regexp.MustCompile(`\b((?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16})\b`), group: 1, Vector: vectorHighSecret},
	{ID: "repository.secret.private_key", hints: []string{"private key"}, Title: "Private key committed", re: regexp.MustCompile(`-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----`), group: 1, Vector: vectorHighSecret},
	{ID: "repository.secret.github_token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, Title: "GitHub token committed", re: regexp.MustCompile(`\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b`), group: 1, Vector: vectorHighSecret},
	{ID: "repository.secret.gitlab_token", hints: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-"}, Title: "GitLab token committed", re: regexp.MustCompile(`\b(gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_\-]{20,})`), group: 1, Vector: vectorHighSecret},
	{ID: "repository.secret.slack_token", hints: []string{"xox"}, Title: "Slack token committed", re: regexp.MustCompile(`\b(xox[abposr]-[0-9A-Za-z]{8,}-[0-9A-Za-z-]{8,})`), group: 1, Vector: vectorSecret},
	{ID: "repository.secret.slack_webhook", hints: []string{"hooks.slack.com"}, Title: "Slack incoming webhook URL committed", re: regexp.MustCompile(`(https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,})`), group: 1, Vector: vectorSecret},
	{ID: "repository.secret.assignment", hints: []string{"secret", "token", "passw", "api_key", "apikey", "access_key", "accesskey"}, Title: "Secret assigned in a committed file",
		re:    regexp.MustCompile(`(?i)\b[A-Z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY)(?:_?KEY)?(?:_?BASE)?["']?\s*(?::=|=|:)\s*["']?([A-Za-z0-9+/=_\-.~!@%^*]{16,})["']?`),
		group: 1, minEntropy: 3.5, Vector: vectorSecret},
}

const secretRemediation = "Revoke the credential at its issuer now (it is in the repository's history for anyone who " +
	"cloned it), issue a new one kept in a secret store or the deployment's environment, and remove it from the " +
	"history (git filter-repo) if the repository is shared."

var secretRefs = []string{"https://cwe.mitre.org/data/definitions/798.html",
	"https://owasp.org/www-project-top-ten/2017/A3_2017-Sensitive_Data_Exposure"}

// wordOnly is a value of letters and separators only: a name, not a secret.
var wordOnly = regexp.MustCompile(`^[a-z_\-.]+$`)

// placeholders are values of generic assignments that are not secrets.
var placeholders = []string{"example", "changeme", "change_me", "placeholder", "your_", "your-", "xxxx", "dummy", "redacted", "sample", "<", "${", "{{", "process.env", "getenv"}

// secretMatch is one secret found on a line.
type secretMatch struct {
	rule   *secretRule
	masked string
}

// findSecrets returns the secrets on one line.
func findSecrets(line string) []secretMatch {
	var out []secretMatch
	low := strings.ToLower(line)
	for i := range secretRules {
		r := &secretRules[i]
		if r.minEntropy > 0 && len(out) > 0 {
			continue // a line with a recognised credential is reported as that
		}
		if !slices.ContainsFunc(r.hints, func(h string) bool { return strings.Contains(low, h) }) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatch(line, 3) {
			v := m[r.group]
			low := strings.ToLower(v)
			if strings.Contains(low, "example") {
				continue
			}
			if r.minEntropy > 0 {
				if entropy(v) < r.minEntropy || isPlaceholder(low) {
					continue
				}
			}
			masked := Mask(v)
			if r.ID == "repository.secret.private_key" {
				masked = "-----BEGIN " + v + "-----" // the header names the kind; the key itself is never shown
			}
			out = append(out, secretMatch{rule: r, masked: masked})
		}
	}
	return out
}

func isPlaceholder(low string) bool {
	for _, p := range placeholders {
		if strings.Contains(low, p) {
			return true
		}
	}
	// One character repeated, or a run of letters only (a word).
	return strings.Trim(low, low[:1]) == "" || wordOnly.MatchString(low)
}

// Mask shows the first four characters of a secret and its length, never
// the rest.
func Mask(v string) string {
	if len(v) <= 8 {
		return strings.Repeat("*", len(v))
	}
	return v[:4] + strings.Repeat("*", min(len(v)-4, 12)) + " (" + itoa(len(v)) + " characters)"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
