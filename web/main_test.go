package web

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeTemplate()
	os.Exit(code)
}
