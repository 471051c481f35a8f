package app

import "slices"

// DevicePlatforms are the platforms a device may have.
func DevicePlatforms() []string { return slices.Clone(devicePlatforms) }

// DeviceListPlatforms are the platforms a listed device may have: those of
// DevicePlatforms and those only a directory lists (phones, Chromebooks).
func DeviceListPlatforms() []string { return slices.Clone(directoryPlatforms) }
