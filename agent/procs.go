package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// listProcesses returns the names of running processes: /proc on Linux;
// elsewhere collectors ask the OS's own tools instead.
func listProcesses() ([]string, error) {
	if runtime.GOOS != "linux" {
		return nil, nil
	}
	dirs, err := filepath.Glob("/proc/[0-9]*/comm")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out, nil
}

// matchProcesses returns the wanted process names that are running.
func matchProcesses(running, wanted []string) []string {
	have := map[string]bool{}
	for _, p := range running {
		have[strings.ToLower(p)] = true
	}
	var found []string
	for _, w := range wanted {
		if have[strings.ToLower(w)] {
			found = append(found, w)
		}
	}
	return found
}
