// Package checkrun is the bookkeeping of one provider run shared by the
// source-control providers: which checks were asked for, outcomes sent
// through one lock (checks of a run report from several goroutines), and a
// check ended early with a single error outcome when the provider's rate
// limit outlasts the run.
package checkrun

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

// Resource names what an outcome is about.
type Resource struct {
	Type string
	ID   string
	Name string
}

// Run reports the outcomes of one run.
type Run struct {
	sink     app.CheckSink
	scope    Resource // the organization or group: where check-wide errors go
	mu       sync.Mutex
	selected map[string]bool
	ended    map[string]bool
	counts   map[string]int
}

// New starts a run of the checks ids names (every check in defs when ids is
// empty). Unknown ids are logged and ignored.
func New(sink app.CheckSink, defs []app.CheckDefinition, ids []string, scope Resource) *Run {
	r := &Run{sink: sink, scope: scope, selected: map[string]bool{}, ended: map[string]bool{}, counts: map[string]int{}}
	known := map[string]bool{}
	for _, d := range defs {
		known[d.ID] = true
	}
	if len(ids) == 0 {
		r.selected = known
	}
	var unknown []string
	for _, id := range ids {
		if known[id] {
			r.selected[id] = true
		} else {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		sink.Log("warn", "unknown check ids ignored: "+strings.Join(unknown, ", "))
	}
	return r
}

// Selected reports whether any of ids is to run.
func (r *Run) Selected(ids ...string) bool {
	for _, id := range ids {
		if r.selected[id] {
			return true
		}
	}
	return false
}

// Ended reports whether check was ended early.
func (r *Run) Ended(check string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended[check]
}

func (r *Run) emit(check string, res Resource, status, msg string, details map[string]any) {
	if !r.selected[check] {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended[check] {
		return
	}
	r.counts[status]++
	r.sink.Outcome(app.CheckOutcome{CheckID: check, ResourceType: res.Type, ResourceID: res.ID,
		ResourceName: res.Name, Status: status, Message: msg, Details: details})
}

// Pass reports a passing resource.
func (r *Run) Pass(check string, res Resource, msg string, details map[string]any) {
	r.emit(check, res, app.CheckPass, msg, details)
}

// Fail reports a failing resource.
func (r *Run) Fail(check string, res Resource, msg string, details map[string]any) {
	r.emit(check, res, app.CheckFail, msg, details)
}

// Error reports a resource the check could not evaluate. A rate limit ends
// the whole check instead (one error outcome on the scope, saying when the
// limit resets), since every later call would be refused too.
func (r *Run) Error(check string, res Resource, err error) {
	var rl *restapi.RateLimitError
	if errors.As(err, &rl) {
		r.End(check, err)
		return
	}
	r.emit(check, res, app.CheckError, err.Error(), nil)
}

// ErrorMsg reports a resource the check could not evaluate, with a message.
func (r *Run) ErrorMsg(check string, res Resource, msg string, details map[string]any) {
	r.emit(check, res, app.CheckError, msg, details)
}

// End ends check with one error outcome on the run's scope; later outcomes
// of the check are dropped.
func (r *Run) End(check string, err error) {
	if !r.selected[check] {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended[check] {
		return
	}
	r.ended[check] = true
	r.counts[app.CheckError]++
	var rl *restapi.RateLimitError
	details := map[string]any{}
	msg := err.Error()
	if errors.As(err, &rl) {
		details["rateLimitResetAt"] = rl.Reset.UTC().Format("2006-01-02T15:04:05Z")
		msg = "check stopped: " + msg
	}
	r.sink.Outcome(app.CheckOutcome{CheckID: check, ResourceType: r.scope.Type, ResourceID: r.scope.ID,
		ResourceName: r.scope.Name, Status: app.CheckError, Message: msg, Details: details})
	r.sink.Log("warn", fmt.Sprintf("%s ended early: %s", check, msg))
}

// Log writes a log line.
func (r *Run) Log(level, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sink.Log(level, msg)
}

// Summary is a one-line count of the outcomes sent.
func (r *Run) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%d passed, %d failed, %d errors", r.counts[app.CheckPass], r.counts[app.CheckFail], r.counts[app.CheckError])
}

// Each runs fn over items with at most workers goroutines at once; fn
// checks the run's context itself.
func Each[T any](workers int, items []T, fn func(T)) {
	if workers < 1 {
		workers = 1
	}
	ch := make(chan T)
	var wg sync.WaitGroup
	for i := 0; i < workers && i < len(items); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
}

// SplitList splits a settings list on commas, semicolons and white space.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})
}
