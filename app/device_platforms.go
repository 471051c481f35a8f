package app

import "slices"

// DevicePlatforms are the platforms a device may have.
func DevicePlatforms() []string { return slices.Clone(devicePlatforms) }
