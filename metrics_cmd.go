package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/compliance-appliance/compliance/metrics"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/spf13/viper"
)

// metricsSetup is /metrics as configured: off (nil), on a listen address
// of its own (metrics_addr), and/or on the main listener behind a bearer
// token (metrics_token).
type metricsSetup struct {
	reg   *metrics.Registry
	token string
	ln    net.Listener
	hs    *http.Server
}

// newMetrics builds the registry and wires it into the app and the
// database when metrics_addr or metrics_token is set; otherwise it returns
// nil and nothing is measured.
func newMetrics(v *viper.Viper, e *env, log *slog.Logger) (*metricsSetup, error) {
	addr, token := v.GetString("metrics_addr"), v.GetString("metrics_token")
	if addr == "" && token == "" {
		return nil, nil
	}
	if token != "" && len(token) < 16 {
		return nil, fmt.Errorf("metrics_token must be at least 16 characters")
	}
	reg := metrics.New(version, metrics.Sources{Pools: e.db.PoolStats, DeliveryQueue: e.app.DeliveryQueue}, log)
	e.app.SetMetrics(reg)
	e.db.SetCommitObserver(reg.ObserveCommit)
	m := &metricsSetup{reg: reg, token: token}
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on metrics_addr %s: %w", addr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", reg.Handler(token))
		m.ln = ln
		m.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	}
	return m, nil
}

// observer is the request observer for the HTTP layer (nil when off).
func (m *metricsSetup) observer() httpx.RequestObserver {
	if m == nil {
		return nil
	}
	return m.reg
}

// handler serves /metrics on the main listener when a token is set and no
// address of its own is; every other path goes to next.
func (m *metricsSetup) handler(next http.Handler) http.Handler {
	if m == nil || m.token == "" || m.ln != nil {
		return next
	}
	h := m.reg.Handler(m.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// start serves the metrics listener, if any; a failure goes to errc.
func (m *metricsSetup) start(log *slog.Logger, errc chan<- error) {
	if m == nil || m.ln == nil {
		return
	}
	log.Info("metrics listening", slog.String("addr", m.ln.Addr().String()))
	go func() {
		if err := m.hs.Serve(m.ln); err != nil && err != http.ErrServerClosed {
			errc <- fmt.Errorf("metrics listener: %w", err)
		}
	}()
}

// shutdown stops the metrics listener, if any.
func (m *metricsSetup) shutdown(ctx context.Context) {
	if m == nil || m.hs == nil {
		return
	}
	_ = m.hs.Shutdown(ctx)
}
