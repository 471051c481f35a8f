package repocheck

import (
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"short":                    "*****",
		"AKIAQ3EGRZ7NXKP2TL5M":     "AKIA************ (20 characters)",
		"abcdefghijklmnopqrstuvwx": "abcd************ (24 characters)",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGenericAssignmentThreshold: a high-entropy value assigned to a
// secret-named key is a secret; words, placeholders, references to the
// environment and low-entropy values are not.
func TestGenericAssignmentThreshold(t *testing.T) {
	hits := []string{`API_KEY = "f39aC7kQ2xZ8mW1pL5vR4tY6uN0bH3jD9s"`, `db_password: Xk2!9qLm8vR3tZ7wP4nB`, `"clientSecret": "7dG2kq9XbL4mW8zR1tY6"`, `AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYzQ9aB3dE5fG7`,
		`config.secret_key_base = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"`}
	misses := []string{`API_KEY = os.Getenv("API_KEY")`, `password: ${DB_PASSWORD}`, `SECRET_KEY=your_secret_key_here`,
		`token_endpoint_auth_method = client_secret_basic`, `PASSWORD = "aaaaaaaaaaaaaaaaaaaa"`, `password_min_length: 12`,
		`SECRET_KEY = "changeme-please-changeme"`, `tokenizer_model = bert-base-uncased-v2`}
	for _, l := range hits {
		if m := findSecrets(l); len(m) != 1 || m[0].rule.ID != "repository.secret.assignment" {
			t.Errorf("%q: %v, want one assignment", l, m)
		}
	}
	for _, l := range misses {
		if m := findSecrets(l); len(m) != 0 {
			t.Errorf("%q: false positive %v", l, m[0].rule.ID)
		}
	}
}

// BenchmarkSecretRules runs every rule over 1 MiB of ordinary source
// lines (the per-file limit).
func BenchmarkSecretRules(b *testing.B) {
	line := `	if err := client.Do(ctx, req); err != nil { return fmt.Errorf("request %s: %w", req.URL, err) } // retry later` + "\n"
	data := []byte(strings.Repeat(line, (1<<20)/len(line)))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if n := len(secretIssues("https://git.example/x", "a.go", data)); n != 0 {
			b.Fatal(n)
		}
	}
}
