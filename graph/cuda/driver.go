package cuda

import (
	"fmt"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// result is a CUresult, the status every driver API call returns.
type result int32

// CUDA_SUCCESS and CUDA_ERROR_NO_DEVICE; cuGetErrorName names the others.
const (
	cudaSuccess       result = 0
	cudaErrorNoDevice result = 100
)

// Flags of the driver API: CU_STREAM_NON_BLOCKING, which does not wait for
// the legacy stream, and CU_STREAM_CAPTURE_MODE_RELAXED, which lets other
// threads call the driver while the stream records.
const (
	streamNonBlocking  = 1
	captureModeRelaxed = 2
)

// Device attributes of cuDeviceGetAttribute.
const (
	attrCapabilityMajor = 75
	attrCapabilityMinor = 76
)

// driver is the part of the CUDA driver API (libcuda.so.1) the device uses.
type driver struct {
	lib                  *library
	cuInit               func(flags uint32) result
	cuDriverGetVersion   func(v *int32) result
	cuGetErrorName       func(r result, s **byte) result
	cuDeviceGetCount     func(n *int32) result
	cuDeviceGet          func(d *int32, ordinal int32) result
	cuDeviceGetName      func(name *byte, n int32, d int32) result
	cuDeviceGetAttribute func(v *int32, attr int32, d int32) result
	cuPrimaryCtxRetain   func(ctx *uintptr, d int32) result
	cuPrimaryCtxRelease  func(d int32) result
	cuCtxSetCurrent      func(ctx uintptr) result
	cuMemAlloc           func(p *graph.DevicePtr, bytes uintptr) result
	cuMemFree            func(p graph.DevicePtr) result
	cuMemHostAlloc       func(p *unsafe.Pointer, bytes uintptr, flags uint32) result
	cuMemFreeHost        func(p unsafe.Pointer) result
	cuMemcpyHtoDAsync    func(dst graph.DevicePtr, src unsafe.Pointer, bytes uintptr, stream uintptr) result
	cuMemcpyDtoHAsync    func(dst unsafe.Pointer, src graph.DevicePtr, bytes uintptr, stream uintptr) result
	cuStreamCreate       func(s *uintptr, flags uint32) result
	cuStreamDestroy      func(s uintptr) result
	cuStreamSynchronize  func(s uintptr) result
	cuStreamBeginCapture func(s uintptr, mode uint32) result
	cuStreamEndCapture   func(s uintptr, g *uintptr) result
	cuGraphInstantiate   func(e *uintptr, g uintptr, flags uint64) result
	cuGraphLaunch        func(e uintptr, s uintptr) result
	cuGraphExecDestroy   func(e uintptr) result
	cuGraphDestroy       func(g uintptr) result
	cuModuleLoadData     func(m *uintptr, image *byte) result
	cuModuleUnload       func(m uintptr) result
	cuModuleGetFunction  func(f *uintptr, m uintptr, name string) result
	cuLaunchKernel       func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra unsafe.Pointer) result
}

// loadDriver opens the first of libs and binds the driver API; it calls
// nothing yet.
func loadDriver(libs []string) (*driver, error) {
	lib, err := openLibrary("the CUDA driver (libcuda.so.1, installed with the NVIDIA driver)", libs)
	if err != nil {
		return nil, err
	}
	d := &driver{lib: lib}
	err = lib.bind(map[string]any{
		"cuInit": &d.cuInit, "cuDriverGetVersion": &d.cuDriverGetVersion, "cuGetErrorName": &d.cuGetErrorName,
		"cuDeviceGetCount": &d.cuDeviceGetCount, "cuDeviceGet": &d.cuDeviceGet, "cuDeviceGetName": &d.cuDeviceGetName,
		"cuDeviceGetAttribute": &d.cuDeviceGetAttribute, "cuDevicePrimaryCtxRetain": &d.cuPrimaryCtxRetain,
		"cuDevicePrimaryCtxRelease_v2": &d.cuPrimaryCtxRelease, "cuCtxSetCurrent": &d.cuCtxSetCurrent,
		"cuMemAlloc_v2": &d.cuMemAlloc, "cuMemFree_v2": &d.cuMemFree, "cuMemHostAlloc": &d.cuMemHostAlloc,
		"cuMemFreeHost": &d.cuMemFreeHost, "cuMemcpyHtoDAsync_v2": &d.cuMemcpyHtoDAsync, "cuMemcpyDtoHAsync_v2": &d.cuMemcpyDtoHAsync,
		"cuStreamCreate": &d.cuStreamCreate, "cuStreamDestroy_v2": &d.cuStreamDestroy, "cuStreamSynchronize": &d.cuStreamSynchronize,
		"cuStreamBeginCapture_v2": &d.cuStreamBeginCapture, "cuStreamEndCapture": &d.cuStreamEndCapture,
		"cuGraphInstantiateWithFlags": &d.cuGraphInstantiate, "cuGraphLaunch": &d.cuGraphLaunch,
		"cuGraphExecDestroy": &d.cuGraphExecDestroy, "cuGraphDestroy": &d.cuGraphDestroy,
		"cuModuleLoadData": &d.cuModuleLoadData, "cuModuleUnload": &d.cuModuleUnload,
		"cuModuleGetFunction": &d.cuModuleGetFunction, "cuLaunchKernel": &d.cuLaunchKernel,
	})
	if err != nil {
		return nil, errors.Wrap(err, "CUDA driver")
	}
	return d, nil
}

// DriverError is a failed driver API call: the call and its CUresult.
type DriverError struct {
	Call string
	Code int
	Name string // as cuGetErrorName gives it, such as CUDA_ERROR_NO_DEVICE
}

// Error is "call: NAME (code)".
func (e *DriverError) Error() string { return fmt.Sprintf("%s: %s (%d)", e.Call, e.Name, e.Code) }

// NoDevice says whether the call failed for want of a GPU.
func (e *DriverError) NoDevice() bool { return result(e.Code) == cudaErrorNoDevice }

// check is nil for CUDA_SUCCESS, else a *DriverError for call.
func (d *driver) check(call string, r result) error {
	if r == cudaSuccess {
		return nil
	}
	name := fmt.Sprintf("CUresult %d", r)
	var s *byte
	if d.cuGetErrorName(r, &s) == cudaSuccess && s != nil {
		name = cString(s)
	}
	return &DriverError{Call: call, Code: int(r), Name: name}
}

// cString is the NUL-terminated string at s (which C owns).
func cString(s *byte) string {
	var b []byte
	for p := unsafe.Pointer(s); *(*byte)(p) != 0 && len(b) < 256; p = unsafe.Add(p, 1) {
		b = append(b, *(*byte)(p))
	}
	return string(b)
}
