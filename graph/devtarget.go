package graph

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// deviceTarget runs a runtime's programs on a backend: each program's
// values in device memory of its own, the parameters in copies that the
// runtime's programs (and its siblings') share, made when a version is
// first read there and kept until the host changes the parameter.
type deviceTarget struct {
	b Backend
	// shared is what the runtime shares with its siblings.
	shared *deviceShared
	// borrowed: the backend and the shared state are another target's.
	borrowed bool
	// scratch is memory for reductions (sums of squares), grown as needed;
	// tables the tables of tensors it keeps, words the host's table being
	// made, k Adam's constants, launch the launch being made.
	scratch []deviceBuf
	tables  []heldTable
	words   []uint64
	k       DevicePtr
	launch  Launch
	copied  int
	// plans are Adam's plans by their gradients' first address.
	plans map[DevicePtr]*adamPlan
}

// deviceShared is what a runtime on a backend shares with its siblings:
// the parameters' copies and the bound on recordings kept.
type deviceShared struct {
	params  map[*tensor.Dense]*deviceParam
	replays replayCache
}

// deviceParam is a parameter's buffer on a backend and the version of its
// values it holds; ahead says that the host's values are older (Adam on
// the device). bf16, when a program with BF16 products reads the
// parameter, is its copy rounded to bfloat16, of version bf16Ver.
type deviceParam struct {
	name          string
	p             DevicePtr
	n             int
	loaded, ahead bool
	ver           uint64
	bf16          DevicePtr
	bf16Ver       uint64
	bf16Loaded    bool
}

// newDeviceTarget is a target on b.
func newDeviceTarget(b Backend) *deviceTarget {
	return &deviceTarget{b: b, shared: &deviceShared{
		params: map[*tensor.Dense]*deviceParam{}, replays: replayCache{limit: DefaultReplays}}}
}

func (t *deviceTarget) engine() tensor.Engine { return placeholderEngine{} }
func (t *deviceTarget) arenaBytes() int       { return 0 }
func (t *deviceTarget) copiedToHost() int     { return t.copied }

func (t *deviceTarget) sibling() target {
	return &deviceTarget{b: t.b, shared: t.shared, borrowed: true}
}

// param is the target's copy of the named parameter of store, made (and
// filled from the host) if it has none or its version is stale.
func (t *deviceTarget) param(store *Params, name string) (*deviceParam, error) {
	v, ver := store.values[name], store.versions[name]
	if v == nil || ver == nil {
		return nil, errors.Errorf("no parameter %s with values", name)
	}
	data, ok := v.Data().([]float32)
	if !ok {
		return nil, errors.Errorf("parameter %s is %v: the device holds float32", name, v.Dtype())
	}
	b, ok := t.shared.params[v]
	if !ok {
		p, err := t.b.Alloc(4 * max(len(data), 1))
		if err != nil {
			return nil, errors.Wrapf(err, "parameter %s on the device", name)
		}
		b = &deviceParam{name: name, p: p, n: len(data)}
		t.shared.params[v] = b
	}
	return b, t.upload(b, data, ver)
}

// upload copies the host's values of b to the device unless it holds their
// version ver.
func (t *deviceTarget) upload(b *deviceParam, data []float32, ver *version) error {
	if b.loaded && b.ver == ver.n {
		return nil
	}
	if err := t.b.ToDevice(b.p, asBytes(data)); err != nil {
		return errors.Wrapf(err, "copying %s to the device", b.name)
	}
	b.loaded, b.ver, b.ahead = true, ver.n, false
	return nil
}

// download copies the values of the parameters of stores whose device
// copies are newer than the host's to the host.
func (t *deviceTarget) download(stores ...*Params) error {
	for _, store := range stores {
		for _, name := range store.names {
			v := store.values[name]
			b, ok := t.shared.params[v]
			if !ok || !b.ahead {
				continue
			}
			data, _ := v.Data().([]float32)
			if err := t.b.ToHost(asBytes(data), b.p); err != nil {
				return errors.Wrapf(err, "copying %s to the host", name)
			}
			b.ahead = false
		}
	}
	return nil
}

// grow is buffer i of *bufs, made at least bytes large.
func (t *deviceTarget) grow(bufs *[]deviceBuf, i, bytes int) (DevicePtr, error) {
	for len(*bufs) <= i {
		*bufs = append(*bufs, deviceBuf{})
	}
	if b := &(*bufs)[i]; b.bytes < bytes {
		if b.p != 0 {
			if err := t.b.Free(b.p); err != nil {
				return 0, err
			}
			b.p, b.bytes = 0, 0
		}
		p, err := t.b.Alloc(bytes)
		if err != nil {
			return 0, errors.Wrap(err, "scratch memory on the device")
		}
		b.p, b.bytes = p, bytes
	}
	return (*bufs)[i].p, nil
}

// free releases bufs.
func (t *deviceTarget) free(bufs []deviceBuf) error {
	var first error
	for _, b := range bufs {
		if b.p != 0 {
			if err := t.b.Free(b.p); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// close frees the parameters' copies (not a sibling's) and the scratch
// memory, and closes the backend.
func (t *deviceTarget) close() error {
	if t.b == nil {
		return nil
	}
	first := t.free(t.scratch)
	for _, h := range t.tables {
		if err := t.b.Free(h.p); err != nil && first == nil {
			first = err
		}
	}
	if err := t.freePtr(t.k); err != nil && first == nil {
		first = err
	}
	t.scratch, t.tables, t.k = nil, nil, 0
	if !t.borrowed {
		for v, p := range t.shared.params {
			for _, q := range []DevicePtr{p.p, p.bf16} {
				if err := t.freePtr(q); err != nil && first == nil {
					first = err
				}
			}
			delete(t.shared.params, v)
		}
		if err := t.b.Close(); err != nil && first == nil {
			first = err
		}
	}
	t.b = nil
	return first
}

// freePtr frees p unless it is null.
func (t *deviceTarget) freePtr(p DevicePtr) error {
	if p == 0 {
		return nil
	}
	return t.b.Free(p)
}
