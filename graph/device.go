package graph

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph/internal/cuda"
)

// Device is where a runtime's programs run.
type Device string

const (
	// DeviceCPU runs programs on the CPU: the default.
	DeviceCPU Device = "cpu"
	// DeviceCUDA runs programs on the first CUDA GPU. A runtime asked for
	// it fails, naming what is missing, when there is none that works.
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

// open opens d: the device programs will run on (gpu, the first GPU, for
// DeviceCUDA), and for DeviceAuto the reason it fell back to the CPU. An
// error opening the GPU names what is missing (a library, the driver's
// version, CUDA_ERROR_NO_DEVICE, the GPU's compute capability).
func (d Device) open() (dev Device, gpu cuda.Device, fallback string, err error) {
	switch d {
	case "", DeviceCPU:
		return DeviceCPU, nil, "", nil
	case DeviceCUDA, DeviceAuto:
		gpu, err := cuda.Open()
		switch {
		case err == nil:
			return DeviceCUDA, gpu, "", nil
		case d == DeviceAuto:
			return DeviceCPU, nil, err.Error(), nil
		}
		return "", nil, "", errors.Wrap(err, "device")
	}
	_, err = ParseDevice(string(d))
	return "", nil, "", err
}
