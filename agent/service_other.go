//go:build !windows

package agent

import (
	"context"
	"os"
)

// RunService is for the Windows service control manager; elsewhere the
// service manager runs `compliance agent run` as a plain process.
func RunService(func(ctx context.Context) error) (bool, error) { return false, nil }

// IsRoot reports whether the process runs as root.
func IsRoot() bool { return os.Geteuid() == 0 }
