package app_test

import (
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func TestEventMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		filter []string
		event  string
		want   bool
	}{
		{[]string{"*"}, "vendor.created", true},
		{[]string{"vendor.created"}, "vendor.created", true},
		{[]string{"vendor.created"}, "vendor.updated", false},
		{[]string{"vendor.*"}, "vendor.questionnaire.submitted", true},
		{[]string{"vendor.*"}, "vendors.created", false},
		{[]string{"finding.*", "control.status.changed"}, "control.status.changed", true},
		{[]string{"control.*"}, "controls", false},
	} {
		if got := app.EventMatches(tc.filter, tc.event); got != tc.want {
			t.Errorf("%v matches %s = %v", tc.filter, tc.event, got)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	lo := app.DeliveryOptions{Jitter: func() float64 { return 0 }}
	hi := app.DeliveryOptions{Jitter: func() float64 { return 0.999999 }}
	if d := lo.Backoff(1); d != 5*time.Second {
		t.Fatalf("shortest first retry %v", d)
	}
	if d := hi.Backoff(1); d < 14*time.Second || d > 15*time.Second {
		t.Fatalf("longest first retry %v", d)
	}
	if d := lo.Backoff(3); d != 20*time.Second {
		t.Fatalf("third retry %v", d)
	}
	if d := hi.Backoff(40); d > 90*time.Minute || d < 89*time.Minute {
		t.Fatalf("capped retry %v", d)
	}
}
