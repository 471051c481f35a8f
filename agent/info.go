package agent

import (
	"context"
	"os"
	"regexp"
	"runtime"
	"strings"
)

// Platform is the appliance's name for goos.
func Platform(goos string) string {
	if goos == "darwin" {
		return "macos"
	}
	return goos
}

// ParseOSRelease returns PRETTY_NAME of /etc/os-release.
func ParseOSRelease(s string) string {
	m := regexp.MustCompile(`(?m)^PRETTY_NAME="?([^"\n]*)"?`).FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return m[1]
}

// Describe reports this device for registration.
func Describe(ctx context.Context, env Env) DeviceInfo {
	host, _ := os.Hostname()
	info := DeviceInfo{Name: host, Hostname: host, Platform: Platform(runtime.GOOS)}
	trim := func(s string, _ error) string { return strings.TrimSpace(s) }
	switch runtime.GOOS {
	case "linux":
		if b, err := env.ReadFile("/etc/os-release"); err == nil {
			info.OSVersion = ParseOSRelease(string(b))
		}
		if b, err := env.ReadFile("/sys/class/dmi/id/product_serial"); err == nil {
			info.SerialNumber = strings.TrimSpace(string(b))
		}
		if b, err := env.ReadFile("/sys/class/dmi/id/product_name"); err == nil {
			info.HardwareModel = strings.TrimSpace(string(b))
		}
	case "darwin":
		info.OSVersion = "macOS " + trim(env.Run(ctx, "sw_vers", "-productVersion"))
		info.HardwareModel = trim(env.Run(ctx, "sysctl", "-n", "hw.model"))
		if m := regexp.MustCompile(`"IOPlatformSerialNumber" = "([^"]+)"`).FindStringSubmatch(trim(env.Run(ctx, "ioreg", "-rd1", "-c", "IOPlatformExpertDevice"))); m != nil {
			info.SerialNumber = m[1]
		}
	case "windows":
		info.OSVersion = trim(env.Run(ctx, "cmd", "/c", "ver"))
		info.SerialNumber = trim(powershell(ctx, env, "(Get-CimInstance Win32_BIOS).SerialNumber"))
		info.HardwareModel = trim(powershell(ctx, env, "(Get-CimInstance Win32_ComputerSystem).Model"))
	}
	if info.OSVersion == "" {
		info.OSVersion = runtime.GOOS
	}
	if info.Name == "" {
		info.Name, info.Hostname = "unnamed", "unnamed"
	}
	return info
}
