package automation

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// BenchmarkEmptyScript measures the sandbox's own cost per run: the
// interpreter, the built-ins, the timer and the memory watchdog.
func BenchmarkEmptyScript(b *testing.B) {
	r := New(nil)
	job := app.ScriptJob{Script: "pass\n"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if out := r.Run(context.Background(), job); out.StopReason != "" {
			b.Fatal(out.Error)
		}
	}
}

// BenchmarkHundredRequests runs a script making 100 HTTP requests to a
// local server and decoding each JSON answer.
func BenchmarkHundredRequests(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"ok": true, "n": 1}`))
	}))
	defer srv.Close()
	r := New(testClient(b, srv))
	job := app.ScriptJob{Hosts: []string{"127.0.0.1"}, Script: `
n = 0
for i in range(100):
    n += http.get("` + srv.URL + `/item").json()["n"]
result({"n": n})
`}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out := r.Run(context.Background(), job)
		if out.StopReason != "" || out.Result["n"] != float64(100) {
			b.Fatal(out.Error, out.Result)
		}
	}
}
