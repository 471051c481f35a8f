package mail

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newOutboxApp(t *testing.T) (*app.App, *clock) {
	t.Helper()
	db := storagetest.Open(t)
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return app.New(db, c.now, slog.New(slog.DiscardHandler), app.Config{}), c
}

func outboxStatus(t *testing.T, a *app.App, id string) app.QueuedMail {
	t.Helper()
	list, err := a.ListMail(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("%s is not in the outbox", id)
	return app.QueuedMail{}
}

// With no server configured nothing is queued and the caller is told.
func TestOutboxNotConfigured(t *testing.T) {
	t.Parallel()
	a, _ := newOutboxApp(t)
	if _, err := a.QueueMail(context.Background(), "", "test", app.MailMessage{To: "a@acme.test", Subject: "x", Text: "x"}); !errors.Is(err, app.ErrMailNotConfigured) {
		t.Fatalf("QueueMail without a server: %v", err)
	}
	if n, err := a.DeliverMail(context.Background()); n != 0 || err != nil {
		t.Fatalf("DeliverMail without a server: %d %v", n, err)
	}
	if list, _ := a.ListMail(context.Background(), 10); len(list) != 0 {
		t.Fatalf("queued %v", list)
	}
}

// A message queued while the server is down is retried with backoff and
// delivered once when it is back; a refused recipient fails at once; bad
// input is refused before anything is queued.
func TestOutboxRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	a, c := newOutboxApp(t)
	// Reserve a port, then free it: the server is down.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cert, pool := testCert(t)
	host, port := hostPort(t, addr)
	cl, err := New(Config{Host: host, Port: port, TLS: TLSStartTLS, From: "compliance@acme.test", RootCAs: pool, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a.SetMailer(cl)
	ctx := context.Background()

	for _, bad := range []app.MailMessage{{To: "two@a.test, three@a.test", Subject: "x"}, {To: "a@acme.test"}, {To: "a@acme.test", Subject: "a\r\nBcc: x@y.test"}} {
		if _, err := a.QueueMail(ctx, "", "test", bad); err == nil {
			t.Errorf("QueueMail(%+v) accepted", bad)
		}
	}
	q, err := a.QueueMail(ctx, "", "test", app.MailMessage{To: "alice@acme.test", Subject: "Training due", Text: "Please complete it."})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := a.DeliverMail(ctx); n != 0 || err != nil {
		t.Fatalf("server down: sent %d, %v", n, err)
	}
	m := outboxStatus(t, a, q.ID)
	if m.Status != app.MailQueued || m.Attempts != 1 || m.LastError == "" || !m.NextAttemptAt.After(c.now()) {
		t.Fatalf("after a failed attempt: %+v", m)
	}
	// Not yet due: nothing is tried.
	if n, _ := a.DeliverMail(ctx); n != 0 || outboxStatus(t, a, q.ID).Attempts != 1 {
		t.Fatal("retried before the backoff ran out")
	}

	s, _ := startSMTP(t, serverOpts{addr: addr, refuse: "nobody@acme.test", cert: &cert, pool: pool})
	c.add(2 * time.Minute)
	if n, err := a.DeliverMail(ctx); n != 1 || err != nil {
		t.Fatalf("server up: sent %d, %v", n, err)
	}
	if n, _ := a.DeliverMail(ctx); n != 0 {
		t.Fatalf("sent again: %d", n)
	}
	if got := s.messages(); len(got) != 1 || got[0].To != "alice@acme.test" {
		t.Fatalf("server received %+v", got)
	}
	if m := outboxStatus(t, a, q.ID); m.Status != app.MailSent || m.Attempts != 2 || m.SentAt == nil || m.LastError != "" {
		t.Fatalf("after delivery: %+v", m)
	}

	refused, err := a.QueueMail(ctx, "", "test", app.MailMessage{To: "nobody@acme.test", Subject: "x", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := a.DeliverMail(ctx); n != 0 {
		t.Fatal("a refused recipient counted as sent")
	}
	if m := outboxStatus(t, a, refused.ID); m.Status != app.MailFailed || m.Attempts != 1 {
		t.Fatalf("refused recipient: %+v", m)
	}
}
