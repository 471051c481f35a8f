package main

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentEndToEnd builds the binary, serves, creates an enrolment token,
// enrols with `compliance agent enroll`, checks in once with
// `compliance agent run --once`, reads the device and its checks through
// the API, then revokes the agent: the next run fails with 401.
func TestAgentEndToEnd(t *testing.T) {
	data := t.TempDir()
	_, _, key := setup(t, data, "enterprise")
	s := serve(t, data)

	code, tok := s.request(t, "POST", "/v1/device-agent/enrolment-tokens", key, map[string]any{"name": "e2e", "maxUses": 1})
	if code != http.StatusCreated {
		t.Fatalf("create enrolment token: %d %v", code, tok)
	}
	agentDir := filepath.Join(t.TempDir(), "agent")
	agent := func(args ...string) (string, error) {
		cmd := exec.Command(binary(t), append(append([]string{"agent"}, args...), "--agent-dir", agentDir)...)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := agent("enroll", "--server", s.url, "--token", tok["token"].(string), "--name", "e2e laptop")
	if err != nil || !strings.Contains(out, "enrolled device dev_") {
		t.Fatalf("enroll: %v\n%s", err, out)
	}
	if out, err := agent("enroll", "--server", s.url, "--token", tok["token"].(string)); err == nil || !strings.Contains(out, "refused") {
		t.Fatalf("a single-use token enrolled twice: %v\n%s", err, out)
	}
	if out, err := agent("run", "--once"); err != nil {
		t.Fatalf("run --once: %v\n%s", err, out)
	}

	code, list := s.request(t, "GET", "/v1/devices", key, nil)
	if code != http.StatusOK {
		t.Fatalf("list devices: %d", code)
	}
	items := list["data"].([]any)
	if len(items) != 1 {
		t.Fatalf("devices: %v", list)
	}
	dev := items[0].(map[string]any)
	id := dev["id"].(string)
	if dev["name"] != "e2e laptop" || dev["lastCheckInAt"] == nil || dev["platform"] != "linux" {
		t.Fatalf("device: %v", dev)
	}
	code, detail := s.request(t, "GET", "/v1/devices/"+id, key, nil)
	if code != http.StatusOK || len(detail["checks"].([]any)) != 6 {
		t.Fatalf("device detail: %d %v", code, detail)
	}
	for _, c := range detail["checks"].([]any) {
		d := c.(map[string]any)["details"].(map[string]any)
		if d["message"] == "" || d["method"] == "" {
			t.Errorf("check without message or method: %v", c)
		}
	}

	if code, body := s.request(t, "DELETE", "/v1/device-agent/sessions/"+id, key, nil); code != http.StatusNoContent {
		t.Fatalf("revoke: %d %v", code, body)
	}
	out, err = agent("run", "--once")
	if err == nil || !strings.Contains(out, "401") {
		t.Fatalf("run after revocation: %v\n%s", err, out)
	}
}
