package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// State is what the agent keeps in its config directory: the server, the
// device and its token, and the check-ins not yet delivered.
type State struct {
	Server         string    `json:"server"`
	OrganizationID string    `json:"organizationId"`
	DeviceID       string    `json:"deviceId"`
	DeviceToken    string    `json:"deviceToken"`
	Pending        []CheckIn `json:"pending"`
	LastCheckInAt  time.Time `json:"lastCheckInAt,omitempty"`
	LastCompliant  *bool     `json:"lastCompliant,omitempty"`
}

// CheckIn is one check-in body.
type CheckIn struct {
	DeviceID     string      `json:"deviceId"`
	AgentVersion string      `json:"agentVersion"`
	Checks       []wireCheck `json:"checks"`
}

type wireCheck struct {
	CheckType string      `json:"checkType"`
	Passed    bool        `json:"passed"`
	Details   wireDetails `json:"details"`
	CheckedAt time.Time   `json:"checkedAt"`
}

type wireDetails struct {
	Method    string  `json:"method"`
	Raw       string  `json:"raw"`
	Message   string  `json:"message"`
	Exception *string `json:"exception,omitempty"`
}

// maxPending is how many undelivered check-ins the state file keeps; older
// ones are dropped (the newest results decide compliance).
const maxPending = 5

// stateFile is the state's file name in the config directory.
const stateFile = "agent.json"

// DefaultConfigDir is the agent's config directory for the current user.
func DefaultConfigDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "compliance-agent")
	}
	return ".compliance-agent"
}

// LoadState reads the state file; a missing file is ErrNotEnrolled.
func LoadState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotEnrolled
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read %s: %w", stateFile, err)
	}
	if s.DeviceToken == "" || s.Server == "" {
		return nil, ErrNotEnrolled
	}
	return &s, nil
}

// Save writes the state atomically, readable by its owner only.
func (s *State) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, stateFile))
}

// Errors the agent acts on.
var (
	ErrNotEnrolled = errors.New("this device is not enrolled: run `compliance agent enroll --server URL --token T`")
	// ErrRevoked is a 401: the token was revoked (or never valid).
	ErrRevoked = errors.New("the appliance refused the device token (401): access was revoked; enrol the device again")
	// ErrDeviceGone is a 404: the device was deleted on the appliance.
	ErrDeviceGone = errors.New("the appliance no longer knows this device (404): it was deleted; enrol the device again")
)

// Client talks to the appliance's device agent API.
type Client struct {
	Server  string
	HTTP    *http.Client
	Version string
	// Sleep waits between retries; tests replace it.
	Sleep func(context.Context, time.Duration) error
}

// NewClient returns a client with sane timeouts.
func NewClient(server, version string) *Client {
	return &Client{Server: strings.TrimRight(server, "/"), HTTP: &http.Client{Timeout: 30 * time.Second}, Version: version, Sleep: sleep}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// apiError is a non-2xx answer.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("the appliance answered %d: %s", e.Status, e.Message)
}

func (c *Client) call(ctx context.Context, method, path string, hdr map[string]string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "compliance-agent/"+c.Version)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(raw, &e)
		if e.Message == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return &apiError{Status: resp.StatusCode, Message: e.Message}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// DeviceInfo describes the device at registration.
type DeviceInfo struct {
	Name          string `json:"name"`
	Hostname      string `json:"hostname"`
	Platform      string `json:"platform"`
	OSVersion     string `json:"osVersion"`
	SerialNumber  string `json:"serialNumber,omitempty"`
	HardwareModel string `json:"hardwareModel,omitempty"`
	AgentVersion  string `json:"agentVersion"`
}

// Enroll registers the device with an enrolment token and returns the
// state to save.
func (c *Client) Enroll(ctx context.Context, token string, info DeviceInfo) (*State, error) {
	var out struct {
		DeviceID       string `json:"deviceId"`
		OrganizationID string `json:"organizationId"`
		DeviceToken    string `json:"deviceToken"`
	}
	info.AgentVersion = c.Version
	if err := c.call(ctx, "POST", "/v1/device-agent/register", map[string]string{"X-Enrolment-Token": token}, info, &out); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			return nil, fmt.Errorf("the enrolment token was refused (unknown, revoked, expired or used up): %w", err)
		}
		return nil, fmt.Errorf("register the device: %w", err)
	}
	return &State{Server: c.Server, OrganizationID: out.OrganizationID, DeviceID: out.DeviceID, DeviceToken: out.DeviceToken}, nil
}

// CheckInResult is the appliance's answer to a check-in.
type CheckInResult struct {
	IsCompliant  bool      `json:"isCompliant"`
	FailedChecks []string  `json:"failedChecks"`
	NextCheckIn  time.Time `json:"nextCheckIn"`
}

// NewCheckIn builds a check-in body from results.
func NewCheckIn(deviceID, version string, rs []Result) CheckIn {
	ci := CheckIn{DeviceID: deviceID, AgentVersion: version}
	for _, r := range rs {
		w := wireCheck{CheckType: r.CheckType, Passed: r.Passed, CheckedAt: r.CheckedAt,
			Details: wireDetails{Method: r.Method, Raw: r.Raw, Message: r.Message}}
		if w.Details.Method == "" {
			w.Details.Method = "none"
		}
		if r.Exception != "" {
			w.Details.Exception = &r.Exception
		}
		ci.Checks = append(ci.Checks, w)
	}
	return ci
}

// retries of one delivery attempt, with exponential backoff and jitter.
const (
	retries     = 3
	backoffBase = 2 * time.Second
)

// send posts one check-in, retrying network errors, 429 and 5xx.
func (c *Client) send(ctx context.Context, token string, ci CheckIn) (*CheckInResult, error) {
	var last error
	for attempt := 0; attempt < retries; attempt++ {
		if attempt > 0 {
			d := backoffBase << (attempt - 1)
			d += time.Duration(rand.Int64N(int64(d)))
			if err := c.Sleep(ctx, d); err != nil {
				return nil, err
			}
		}
		var out CheckInResult
		err := c.call(ctx, "POST", "/v1/device-agent/check-in", map[string]string{"X-Device-Token": token}, ci, &out)
		if err == nil {
			return &out, nil
		}
		var ae *apiError
		if errors.As(err, &ae) {
			switch {
			case ae.Status == http.StatusUnauthorized:
				return nil, ErrRevoked
			case ae.Status == http.StatusNotFound:
				return nil, ErrDeviceGone
			case ae.Status == http.StatusTooManyRequests || ae.Status >= 500:
			default:
				return nil, err // the body is wrong; retrying will not help
			}
		}
		last = err
	}
	// %v, not %w: the caller keeps this check-in queued, whereas an
	// apiError it can unwrap means the appliance refused the body.
	return nil, fmt.Errorf("check-in failed after %d attempts: %v", retries, last)
}

// Deliver queues ci after the pending check-ins and sends them oldest
// first. What cannot be sent stays queued (at most maxPending). A check-in
// the appliance refuses as invalid is dropped and reported.
func (c *Client) Deliver(ctx context.Context, st *State, ci CheckIn, log *slog.Logger) (*CheckInResult, error) {
	st.Pending = append(st.Pending, ci)
	if len(st.Pending) > maxPending {
		st.Pending = st.Pending[len(st.Pending)-maxPending:]
	}
	var res *CheckInResult
	for len(st.Pending) > 0 {
		r, err := c.send(ctx, st.DeviceToken, st.Pending[0])
		var ae *apiError
		switch {
		case err == nil:
			res = r
			st.Pending = st.Pending[1:]
			st.LastCheckInAt = time.Now().UTC()
			st.LastCompliant = &r.IsCompliant
		case errors.As(err, &ae):
			log.Warn("check-in refused, dropped", slog.Int("status", ae.Status), slog.String("error", ae.Message))
			st.Pending = st.Pending[1:]
		default:
			return res, err
		}
	}
	return res, nil
}

// Options configure Run.
type Options struct {
	ConfigDir string
	Version   string
	Env       Env
	Once      bool
	// Interval overrides the server's nextCheckIn when non-zero.
	Interval time.Duration
	Log      *slog.Logger
}

// Interval bounds: the loop never checks in more often than minInterval.
const (
	minInterval     = 5 * time.Minute
	maxInterval     = 24 * time.Hour
	defaultInterval = time.Hour
)

// Run collects and checks in, once or on an interval until ctx ends. It
// returns ErrRevoked or ErrDeviceGone when the appliance refuses the device.
func Run(ctx context.Context, o Options) error {
	st, err := LoadState(o.ConfigDir)
	if err != nil {
		return err
	}
	c := NewClient(st.Server, o.Version)
	for {
		rs := Collect(ctx, o.Env, runtime.GOOS)
		ci := NewCheckIn(st.DeviceID, o.Version, rs)
		res, err := c.Deliver(ctx, st, ci, o.Log)
		if serr := st.Save(o.ConfigDir); serr != nil {
			o.Log.Error("state not saved", slog.Any("error", serr))
		}
		if errors.Is(err, ErrRevoked) || errors.Is(err, ErrDeviceGone) {
			return err
		}
		wait := o.Interval
		switch {
		case err != nil:
			o.Log.Warn("check-in failed; queued for the next run", slog.Int("pending", len(st.Pending)), slog.Any("error", err))
			if o.Once {
				return err
			}
		case res != nil:
			o.Log.Info("checked in", slog.Bool("compliant", res.IsCompliant), slog.Any("failed_checks", res.FailedChecks))
			if wait == 0 {
				wait = time.Until(res.NextCheckIn)
			}
		}
		if o.Once {
			return nil
		}
		switch {
		case o.Interval > 0:
			wait = max(o.Interval, time.Minute)
		case wait <= 0:
			wait = defaultInterval
		default:
			wait = min(max(wait, minInterval), maxInterval)
		}
		// Jitter spreads a fleet's check-ins over a tenth of the interval.
		wait += time.Duration(rand.Int64N(int64(wait / 10)))
		if err := sleep(ctx, wait); err != nil {
			return nil
		}
	}
}
