// Package automation is the sandbox task automations run in: a Starlark
// interpreter (go.starlark.net) with a step budget, a wall-clock timeout, a
// memory watchdog and a small set of built-ins (http limited to declared
// hosts through the appliance's outbound client, tls.inspect, secret, log,
// result, evidence, json, time). Starlark has no filesystem, process or
// network access of its own: a script reaches the outside only through the
// built-ins defined here. It implements app.ScriptRunner.
package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkjson"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.ScriptRunner = (*Runner)(nil)

// fileOptions are the dialect scripts are written in: while loops and
// top-level statements are allowed (budgets bound them), recursion is not.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// Runner runs scripts. One Runner serves the whole appliance; the memory
// watchdog assumes runs do not overlap (app runs them one at a time).
type Runner struct {
	client *http.Client
	// mu serializes runs so the watchdog's heap reading is the run's own.
	mu sync.Mutex
	// sample is how often the watchdog reads the heap (default 2 ms).
	sample time.Duration
}

// New returns a runner whose http and tls built-ins go through client (the
// outbound client: network policy, proxy, timeouts). A nil client makes a
// runner without network built-ins working (they fail with a clear error).
func New(client *http.Client) *Runner {
	return &Runner{client: client, sample: 2 * time.Millisecond}
}

// Check parses a script and resolves its names, reporting the first error
// with its line and column.
func (r *Runner) Check(script string) error {
	_, _, err := starlark.SourceProgramOptions(fileOptions, "script.star", script, predeclaredNames().Has)
	if err != nil {
		return scriptError(err)
	}
	return nil
}

// CheckCriteria parses an evaluation expression.
func (r *Runner) CheckCriteria(expr string) error {
	if _, err := syntax.ParseExpr("criteria", expr, 0); err != nil {
		return scriptError(err)
	}
	_, err := starlark.ExprFuncOptions(fileOptions, "criteria", expr, criteriaEnv(starlark.None))
	if err != nil {
		return scriptError(err)
	}
	return nil
}

func scriptError(err error) error {
	var se syntax.Error
	if errors.As(err, &se) {
		return &app.ScriptError{Line: int(se.Pos.Line), Column: int(se.Pos.Col), Message: se.Msg}
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		line := 0
		if len(ee.CallStack) > 0 {
			line = int(ee.CallStack.At(0).Pos.Line)
		}
		return &app.ScriptError{Line: line, Message: ee.Msg}
	}
	// resolve errors come as a list of syntax.Error-like values.
	msg := err.Error()
	line, col := 0, 0
	if _, e := fmt.Sscanf(msg, "script.star:%d:%d:", &line, &col); e == nil {
		msg = strings.TrimSpace(strings.SplitN(msg, ": ", 2)[1])
	}
	return &app.ScriptError{Line: line, Column: col, Message: msg}
}

// names every script sees, for the resolver.
type nameSet map[string]bool

func (n nameSet) Has(s string) bool { return n[s] || starlark.Universe.Has(s) }

func predeclaredNames() nameSet {
	return nameSet{"http": true, "tls": true, "secret": true, "log": true, "result": true, "evidence": true,
		"json": true, "time": true, "fail": true}
}

// Stop reasons a run records when the sandbox ended it.
const (
	StopSteps   = "steps"
	StopTimeout = "timeout"
	StopMemory  = "memory"
	StopOutput  = "output"
	StopHost    = "host"
	StopError   = "error"
)

// run is the state of one script execution.
type run struct {
	job      app.ScriptJob
	httpc    *http.Client
	limits   app.ScriptLimits
	thread   *starlark.Thread
	ctx      context.Context
	out      app.ScriptOutcome
	bytes    int64 // bytes handed to the script by built-ins
	secrets  []string
	stopOnce sync.Once
	stop     string // the first stop reason
	stopMsg  string
	mu       sync.Mutex
}

func (x *run) halt(reason, msg string) {
	x.stopOnce.Do(func() {
		x.mu.Lock()
		x.stop, x.stopMsg = reason, msg
		x.mu.Unlock()
		x.thread.Cancel(msg)
	})
}

// Run executes a script under the job's limits. It never panics and never
// returns an error: every failure is in the outcome, with a stop reason
// when the sandbox ended the script.
func (r *Runner) Run(ctx context.Context, job app.ScriptJob) (out app.ScriptOutcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lim := job.Limits.WithDefaults()
	x := &run{job: job, limits: lim, ctx: ctx, httpc: r.client}
	x.out.Result = map[string]any{}
	x.thread = &starlark.Thread{Name: "automation", Print: func(_ *starlark.Thread, msg string) { x.log("info", msg) }}
	x.thread.SetMaxExecutionSteps(lim.MaxSteps)
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			out = x.out
			out.StopReason, out.Error = StopError, fmt.Sprintf("the sandbox failed: %v", p)
		}
	}()

	// Wall clock and cancellation.
	rctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	x.ctx = rctx
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		select {
		case <-done:
		case <-rctx.Done():
			if ctx.Err() != nil {
				x.halt(StopTimeout, "the run was cancelled: the appliance is stopping")
			} else {
				x.halt(StopTimeout, fmt.Sprintf("the script did not finish within %s", lim.Timeout))
			}
		}
	}()
	// Memory watchdog: heap growth since the start of the run.
	go func() {
		defer wg.Done()
		r.watch(x, done)
	}()

	predeclared := x.builtins()
	_, err := starlark.ExecFileOptions(fileOptions, x.thread, "script.star", job.Script, predeclared)
	close(done)
	wg.Wait()
	x.out.Steps = x.thread.ExecutionSteps()
	x.out.Duration = time.Since(start)
	if err != nil {
		x.mu.Lock()
		stop, stopMsg := x.stop, x.stopMsg
		x.mu.Unlock()
		switch {
		case stop != "":
			x.out.StopReason, x.out.Error = stop, stopMsg
		case strings.Contains(err.Error(), "too many steps"):
			x.out.StopReason = StopSteps
			x.out.Error = fmt.Sprintf("the script used more than %d execution steps", lim.MaxSteps)
		default:
			x.out.StopReason = StopError
			if se, ok := scriptError(err).(*app.ScriptError); ok {
				x.out.Error = se.Error()
			} else {
				x.out.Error = err.Error()
			}
		}
	}
	return x.out
}

// heapBytes reads the bytes in live and not yet swept heap objects.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// watch stops the run when the process heap (live and not yet swept
// objects) has grown by more than the memory limit since the run started.
// Garbage the script made counts until the collector sweeps it, so the
// bound is conservative: a script churning through garbage may be stopped
// somewhat before its live data reaches the limit, never after.
func (r *Runner) watch(x *run, done <-chan struct{}) {
	base := heapBytes()
	t := time.NewTicker(r.sample)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if heapBytes()-base > x.limits.MaxMemory {
			x.halt(StopMemory, fmt.Sprintf("the script allocated more than %d MiB", x.limits.MaxMemory>>20))
			return
		}
	}
}

func (x *run) log(level, msg string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.out.Logs) >= x.limits.MaxLogLines {
		x.out.LogsDropped++
		return
	}
	if r := []rune(msg); len(r) > 1000 {
		msg = string(r[:1000]) + "…"
	}
	x.out.Logs = append(x.out.Logs, app.RunLog{At: time.Now().UTC(), Level: level, Message: msg})
}

// charge counts bytes a built-in hands to the script against the run's
// output budget, stopping the run past it.
func (x *run) charge(n int) error {
	x.mu.Lock()
	x.bytes += int64(n)
	over := x.bytes > x.limits.MaxBuiltinBytes
	x.mu.Unlock()
	if over {
		msg := fmt.Sprintf("the built-ins returned more than %d MiB in total", x.limits.MaxBuiltinBytes>>20)
		x.halt(StopOutput, msg)
		return errors.New(msg)
	}
	return nil
}

func (x *run) builtins() starlark.StringDict {
	b := func(name string, fn func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
		return starlark.NewBuiltin(name, fn)
	}
	return starlark.StringDict{
		"http": starlarkstruct.FromStringDict(starlark.String("http"), starlark.StringDict{
			"get":  b("http.get", x.httpCall("GET")),
			"post": b("http.post", x.httpCall("POST")),
		}),
		"tls":      starlarkstruct.FromStringDict(starlark.String("tls"), starlark.StringDict{"inspect": b("tls.inspect", x.tlsInspect)}),
		"secret":   b("secret", x.secret),
		"log":      b("log", x.logBuiltin),
		"result":   b("result", x.result),
		"evidence": b("evidence", x.evidence),
		"json":     starlarkjson.Module,
		"time": starlarkstruct.FromStringDict(starlark.String("time"), starlark.StringDict{
			"now":  b("time.now", timeNow),
			"unix": b("time.unix", timeUnix),
		}),
		"fail": b("fail", x.fail),
	}
}

func (x *run) logBuiltin(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	level := "info"
	for _, kv := range kwargs {
		if string(kv[0].(starlark.String)) == "level" {
			s, ok := starlark.AsString(kv[1])
			if !ok || (s != "info" && s != "warn" && s != "error") {
				return nil, errors.New("log: level must be info, warn or error")
			}
			level = s
		}
	}
	parts := make([]string, len(args))
	for i, a := range args {
		if s, ok := starlark.AsString(a); ok {
			parts[i] = s
		} else {
			parts[i] = a.String()
		}
	}
	x.log(level, strings.Join(parts, " "))
	return starlark.None, nil
}

func (x *run) fail(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	parts := make([]string, len(args))
	for i, a := range args {
		if s, ok := starlark.AsString(a); ok {
			parts[i] = s
		} else {
			parts[i] = a.String()
		}
	}
	return nil, errors.New(strings.Join(parts, " "))
}

func (x *run) result(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d *starlark.Dict
	if err := starlark.UnpackPositionalArgs(fn.Name(), args, kwargs, 1, &d); err != nil {
		return nil, err
	}
	v, err := toGo(d)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	raw, _ := json.Marshal(v)
	if len(raw) > x.limits.MaxResultBytes {
		return nil, fmt.Errorf("result: the result is %d bytes encoded, over the %d allowed", len(raw), x.limits.MaxResultBytes)
	}
	m, _ := v.(map[string]any)
	x.mu.Lock()
	x.out.Result = m
	x.mu.Unlock()
	return starlark.None, nil
}

func (x *run) evidence(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name, text string
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "name", &name, "text", &text); err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return nil, errors.New("evidence: name must be 1 to 200 characters")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	total := len(text)
	for _, e := range x.out.Evidence {
		total += len(e.Text)
	}
	if len(x.out.Evidence) >= 20 || total > x.limits.MaxResultBytes*4 {
		return nil, errors.New("evidence: at most 20 pieces and 1 MiB of evidence text per run")
	}
	x.out.Evidence = append(x.out.Evidence, app.ScriptEvidence{Name: name, Text: text})
	return starlark.None, nil
}

func (x *run) secret(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var conn, field string
	if err := starlark.UnpackPositionalArgs(fn.Name(), args, kwargs, 2, &conn, &field); err != nil {
		return nil, err
	}
	if x.job.Secret == nil {
		return nil, errors.New("secret: no connection credentials are available to this run")
	}
	v, err := x.job.Secret(x.ctx, conn, field)
	if err != nil {
		return nil, fmt.Errorf("secret(%q, %q): %w", conn, field, err)
	}
	return starlark.String(v), nil
}

func timeNow(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return starlark.String(time.Now().UTC().Format(time.RFC3339)), nil
}

func timeUnix(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(fn.Name(), args, kwargs, 0, &s); err != nil {
		return nil, err
	}
	if s == "" {
		return starlark.MakeInt64(time.Now().Unix()), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("time.unix: %q is not an RFC 3339 time", s)
	}
	return starlark.MakeInt64(t.Unix()), nil
}

// toGo converts a Starlark value to its JSON form (maps, lists, strings,
// numbers, booleans, nil) through the json module's encoder.
func toGo(v starlark.Value) (any, error) {
	enc := starlarkjson.Module.Members["encode"].(*starlark.Builtin)
	s, err := starlark.Call(&starlark.Thread{}, enc, starlark.Tuple{v}, nil)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal([]byte(string(s.(starlark.String))), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// fromGo converts a JSON value to Starlark.
func fromGo(v any) (starlark.Value, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := starlarkjson.Module.Members["decode"].(*starlark.Builtin)
	return starlark.Call(&starlark.Thread{}, dec, starlark.Tuple{starlark.String(raw)}, nil)
}
