//go:build windows

package agent

import (
	"context"

	"golang.org/x/sys/windows/svc"
)

// RunService runs fn under the Windows service control manager when the
// process was started as a service (installed by `compliance agent
// install`), answering its stop and shutdown requests; it reports false
// when the process is not a service.
func RunService(fn func(ctx context.Context) error) (bool, error) {
	is, err := svc.IsWindowsService()
	if err != nil || !is {
		return false, err
	}
	return true, svc.Run(WindowsName, &serviceHandler{fn: fn})
}

type serviceHandler struct {
	fn func(ctx context.Context) error
}

func (h *serviceHandler) Execute(_ []string, reqs <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.fn(ctx) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case c := <-reqs:
			switch c.Cmd {
			case svc.Interrogate:
				status <- c.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending}
				cancel()
				<-done
				return false, 0
			}
		case err := <-done:
			if err != nil {
				return false, 1
			}
			return false, 0
		}
	}
}

// IsRoot on Windows: sc.exe itself refuses without administrator rights.
func IsRoot() bool { return true }
