package graph

import "github.com/pkg/errors"

// Device is where a runtime's programs run.
type Device string

const (
	// DeviceCPU runs programs on the CPU: the default.
	DeviceCPU Device = "cpu"
	// DeviceCUDA runs programs on the first CUDA GPU, through the backend
	// that graph/cuda registers. A runtime asked for it fails, naming what
	// is missing, when there is none that works.
	DeviceCUDA Device = "cuda"
	// DeviceAuto runs programs on a usable CUDA GPU, or else on the CPU,
	// and says why (Runtime.Fallback).
	DeviceAuto Device = "auto"
)

// Devices lists the devices ParseDevice accepts.
var Devices = []Device{DeviceCPU, DeviceCUDA, DeviceAuto}

// ParseDevice parses "cpu", "cuda" or "auto"; "" is DeviceCPU.
func ParseDevice(s string) (Device, error) {
	switch d := Device(s); d {
	case "":
		return DeviceCPU, nil
	case DeviceCPU, DeviceCUDA, DeviceAuto:
		return d, nil
	}
	return "", errors.Errorf("device %q: want cpu, cuda or auto", s)
}

// String implements flag.Value.
func (d Device) String() string { return string(d) }

// Set implements flag.Value with ParseDevice, so that a command's -device
// flag can be a Device.
func (d *Device) Set(s string) error {
	v, err := ParseDevice(s)
	if err == nil {
		*d = v
	}
	return err
}

// open opens d: the backend programs will run on (nil on the CPU), and
// for DeviceAuto the reason it fell back to the CPU. An error opening the
// device names what is missing (a backend's package, a library, the
// driver's version, a GPU).
func (d Device) open() (b Backend, fallback string, err error) {
	switch d {
	case "", DeviceCPU:
		return nil, "", nil
	case DeviceCUDA, DeviceAuto:
		b, err := openBackend(DeviceCUDA)
		switch {
		case err == nil:
			return b, "", nil
		case d == DeviceAuto:
			return nil, err.Error(), nil
		}
		return nil, "", errors.Wrap(err, "device")
	}
	_, err = ParseDevice(string(d))
	return nil, "", err
}
