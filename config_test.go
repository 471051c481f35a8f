package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the CLI in process and returns stdout.
func run(t *testing.T, args ...string) string {
	t.Helper()
	root := rootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestConfigPrecedence proves flags > COMPLIANCE_* environment > config
// file > defaults, with the data directory as the witness.
func TestConfigPrecedence(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "COMPLIANCE_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	dir := func(name string) string { return filepath.Join(tmp, name) }
	cfg := filepath.Join(tmp, "config.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+dir("from-file")+"\nlog_format: json\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	run(t, "migrate")
	if !exists(filepath.Join(tmp, "data", "compliance.db")) {
		t.Fatal("default: ./data")
	}
	run(t, "--config", cfg, "migrate")
	if !exists(filepath.Join(dir("from-file"), "compliance.db")) {
		t.Fatal("the config file overrides the default")
	}
	t.Setenv("COMPLIANCE_DATA_DIR", dir("from-env"))
	run(t, "--config", cfg, "migrate")
	if !exists(filepath.Join(dir("from-env"), "compliance.db")) {
		t.Fatal("the environment overrides the config file")
	}
	run(t, "--config", cfg, "--data-dir", dir("from-flag"), "migrate")
	if !exists(filepath.Join(dir("from-flag"), "compliance.db")) {
		t.Fatal("a flag overrides the environment")
	}
	// The data dir and its secrets directory are private to the owner.
	for _, d := range []string{dir("from-flag"), filepath.Join(dir("from-flag"), "secrets")} {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s must be 0700: %v %v", d, st.Mode(), err)
		}
	}
	if _, err := os.Stat(cfg + ".missing"); err == nil {
		t.Fatal("unexpected file")
	}
	root := rootCmd()
	root.SetArgs([]string{"--config", cfg + ".missing", "migrate"})
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err == nil {
		t.Fatal("a missing config file is an error")
	}
}
