// Package agent is the device agent: the same binary as the appliance, run
// on a laptop as `compliance agent`. It collects the device's security
// settings with the operating system's own tools, and checks the results in
// to the appliance's device agent API.
//
// Every check has a pure parser over a command's output (tested on recorded
// outputs of each OS in testdata) and a collector that runs the commands
// through an injectable Env. Collectors are picked by GOOS at run time, so
// every platform's code compiles everywhere.
package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Check types, as the appliance names them.
const (
	DiskEncryption = "disk_encryption"
	ScreenLock     = "screen_lock"
	Antivirus      = "antivirus"
	PasswordPolicy = "password_policy"
	OSUpdates      = "os_updates"
	Firewall       = "firewall"
)

// CheckTypes lists every check the agent runs, in order.
var CheckTypes = []string{DiskEncryption, ScreenLock, Antivirus, PasswordPolicy, OSUpdates, Firewall}

// Result is one check's outcome.
type Result struct {
	CheckType string    `json:"checkType"`
	Passed    bool      `json:"passed"`
	Method    string    `json:"method"`
	Raw       string    `json:"raw"`
	Message   string    `json:"message"`
	Exception string    `json:"exception,omitempty"`
	CheckedAt time.Time `json:"checkedAt"`
}

// Env is what collectors read the machine through; tests replace it.
type Env struct {
	// Run runs a command and returns its combined output.
	Run func(ctx context.Context, name string, args ...string) (string, error)
	// ReadFile reads a file.
	ReadFile func(name string) ([]byte, error)
	// Getenv reads an environment variable.
	Getenv func(string) string
	// Processes lists the names of running processes.
	Processes func() ([]string, error)
	// Now is the clock.
	Now func() time.Time
	// EDRProcesses are extra process names that count as antivirus/EDR.
	EDRProcesses []string
}

// commandTimeout bounds every command a collector runs.
const commandTimeout = 20 * time.Second

// SystemEnv reads the real machine.
func SystemEnv() Env {
	return Env{
		Run: func(ctx context.Context, name string, args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, commandTimeout)
			defer cancel()
			out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
			return string(out), err
		},
		ReadFile:  os.ReadFile,
		Getenv:    os.Getenv,
		Processes: listProcesses,
		Now:       time.Now,
	}
}

// errNotFound reports a missing tool.
func missing(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist)
}

// Collect runs every check for goos (runtime.GOOS when empty).
func Collect(ctx context.Context, env Env, goos string) []Result {
	if goos == "" {
		goos = runtime.GOOS
	}
	var cs map[string]func(context.Context, Env) Result
	switch goos {
	case "linux":
		cs = linuxCollectors
	case "darwin":
		cs = darwinCollectors
	case "windows":
		cs = windowsCollectors
	}
	out := make([]Result, 0, len(CheckTypes))
	for _, t := range CheckTypes {
		var r Result
		if c, ok := cs[t]; ok {
			r = c(ctx, env)
		} else {
			r = Result{Method: "none", Message: "this check is not available on " + goos, Exception: "unsupported platform " + goos}
		}
		r.CheckType = t
		r.CheckedAt = env.Now().UTC()
		out = append(out, clip(r))
	}
	return out
}

// Limits of the check-in API.
const (
	maxMethod    = 100
	maxRaw       = 2000
	maxMessage   = 1000
	maxException = 500
)

// clip keeps a result within the API's limits (the tail of raw output is
// usually the informative part of an error, the head of a listing: keep the head).
func clip(r Result) Result {
	r.Method = cut(r.Method, maxMethod)
	r.Raw = cut(strings.TrimSpace(r.Raw), maxRaw)
	r.Message = cut(r.Message, maxMessage)
	r.Exception = cut(r.Exception, maxException)
	return r
}

func cut(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// pass and fail build results.
func pass(method, raw, msg string) Result {
	return Result{Passed: true, Method: method, Raw: raw, Message: msg}
}
func fail(method, raw, msg string) Result { return Result{Method: method, Raw: raw, Message: msg} }

// broken is a check that could not run; it fails with the reason.
func broken(method, raw string, err error, msg string) Result {
	return Result{Method: method, Raw: raw, Message: msg, Exception: err.Error()}
}
