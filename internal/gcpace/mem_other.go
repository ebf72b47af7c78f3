//go:build !linux

package gcpace

// physicalMemory is unknown here: DefaultHeadroom uses maxHeadroom.
func physicalMemory() uint64 { return 0 }
