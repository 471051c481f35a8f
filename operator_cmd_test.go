package main

import (
	"strings"
	"testing"
)

func TestOperatorCommands(t *testing.T) {
	dir := testDataDir(t)
	org := jsonObject(t, cli(t, dir, "--json", "org", "create", "--name", "Acme"))["id"].(string)
	opID := jsonObject(t, cli(t, dir, "--json", "user", "create", "--org", org, "--email", "Ops@Example.com", "--name", "Ops", "--role", "admin", "--operator"))["id"].(string)
	cli(t, dir, "user", "create", "--org", org, "--email", "second@example.com", "--name", "Second", "--role", "owner")

	list := jsonObject(t, cli(t, dir, "--json", "operator", "list"))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != opID || list[0].(map[string]any)["email"] != "ops@example.com" {
		t.Fatalf("operators after user create --operator: %v", list)
	}
	got := jsonObject(t, cli(t, dir, "--json", "operator", "grant", "SECOND@example.com"))
	if got["email"] != "second@example.com" {
		t.Fatalf("grant: %v", got)
	}
	cli(t, dir, "operator", "grant", "second@example.com") // twice is fine
	if out := cli(t, dir, "operator", "list"); !strings.Contains(out, "second@example.com") || !strings.Contains(out, "ops@example.com") {
		t.Fatalf("plain list: %q", out)
	}
	cli(t, dir, "operator", "revoke", "ops@example.com")
	list = jsonObject(t, cli(t, dir, "--json", "operator", "list"))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["email"] != "second@example.com" {
		t.Fatalf("operators after revoke: %v", list)
	}
	if _, errOut, err := cliResult(t, dir, "operator", "grant", "nobody@example.com"); err == nil || !strings.Contains(errOut, "nobody@example.com") {
		t.Fatalf("granting an unknown login: err %v, stderr %q", err, errOut)
	}
}
