package app

import "strings"

// What the device pages show besides the services: whether agent binaries
// are served, and the appliance's public URL for the enrol command.

// AgentDownloadsConfigured reports whether agent.downloads_dir is set.
func AgentDownloadsConfigured() bool {
	agentDownloads.RLock()
	defer agentDownloads.RUnlock()
	return agentDownloads.dir != ""
}

// PublicBaseURL is the configured public_url without a trailing slash, ""
// when none is configured.
func (a *App) PublicBaseURL() string {
	return strings.TrimRight(a.config.PublicURL, "/")
}
