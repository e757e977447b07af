package graph

import (
	"slices"

	"github.com/pkg/errors"
)

// The device's gradients, sums and Adam: kernels over all of a model's
// tensors at once (kernels/adam.cu), each given a table of tensor_entry,
// eight 64-bit words a tensor, which the target uploads once for each
// distinct table it is given and keeps.

// Words of a tensor_entry.
const (
	entryP = iota
	entryG
	entryM
	entryV
	entryN
	entryDecay
	entryBF16
	entryWords = 8
)

// Grids of the kernels over tables: sqBlocks blocks of sqBlock threads for
// each tensor's sum of squares (one partial per thread), and at most
// multiBlocks blocks of elemBlock threads for each tensor of the others.
const (
	sqBlocks    = 16
	sqBlock     = 256
	sqThreads   = sqBlocks * sqBlock
	multiBlocks = 1024
	maxTensors  = 65535
)

// heldTable is a table of tensors on the device and the words it holds.
type heldTable struct {
	p     DevicePtr
	words []uint64
}

// maxTables is how many tables a target keeps.
const maxTables = 16

// table is a device copy of the table words, one kept from an earlier call
// if it holds the same words.
func (t *deviceTarget) table(words []uint64) (DevicePtr, error) {
	for _, h := range t.tables {
		if slices.Equal(h.words, words) {
			return h.p, nil
		}
	}
	p, err := t.b.Alloc(8 * max(len(words), 1))
	if err != nil {
		return 0, errors.Wrap(err, "a table of tensors on the device")
	}
	if err := t.b.ToDevice(p, asBytes(words)); err != nil {
		_ = t.b.Free(p) // the copy's error is what matters
		return 0, errors.Wrap(err, "a table of tensors to the device")
	}
	if len(t.tables) == maxTables {
		if err := t.b.Free(t.tables[0].p); err != nil {
			return 0, err
		}
		t.tables = t.tables[1:]
	}
	t.tables = append(t.tables, heldTable{p: p, words: slices.Clone(words)})
	return p, nil
}

// entries starts a table of n tensors in the target's words, zeroed.
func (t *deviceTarget) entries(n int) []uint64 {
	t.words = slices.Grow(t.words[:0], n*entryWords)[:n*entryWords]
	clear(t.words)
	return t.words
}

// checkTensors checks that one launch over a table can take n tensors, one
// a row of blocks.
func checkTensors(n int) error {
	if n > maxTensors {
		return errors.Errorf("%d tensors in one launch, at most %d", n, maxTensors)
	}
	return nil
}

// launchTable launches k over the tensors of table (n of them, the largest
// of most elements), with args after the table.
func (t *deviceTarget) launchTable(k *DeviceKernel, table DevicePtr, n, most int, args func(Launch) Launch) error {
	if err := checkTensors(n); err != nil {
		return err
	}
	blocks := min(max((most+elemBlock-1)/elemBlock, 1), multiBlocks)
	l := k.Grid(Dim3{X: blocks, Y: n}, Dim3{X: elemBlock}).Ptr(table)
	t.launch = args(l)
	return t.b.Launch(&t.launch)
}

func (t *deviceTarget) adam(params, m, v *Params, g gradSet, s AdamStep) error {
	if len(g.names) == 0 {
		return nil
	}
	if g.dev == nil {
		return errors.New("the gradients lie on the host, the runtime runs on a device")
	}
	plan, err := t.adamPlan(params, m, v, g)
	if err != nil {
		return err
	}
	for i := range plan.bufs {
		for j, b := range plan.bufs[i] {
			if err := t.upload(b, plan.data[i][j], plan.vers[i][j]); err != nil {
				return err
			}
		}
	}
	if err := t.adamConsts(s); err != nil {
		return err
	}
	if err := t.launchTable(adamMultiF32, plan.table, len(g.names), plan.most, func(l Launch) Launch { return l.Ptr(t.k) }); err != nil {
		return err
	}
	for i := range plan.bufs {
		for j, b := range plan.bufs[i] {
			ver := plan.vers[i][j]
			ver.n++ // Params.Updated
			b.ver, b.ahead = ver.n, true
		}
		if b := plan.bufs[i][0]; b.bf16 != 0 && b.bf16 == plan.bf16[i] {
			b.bf16Ver = b.ver // adam_multi_f32 rounded it there
		}
	}
	return nil
}

// adamPlan is what Adam's step updates, of the stores params, m and v for
// the gradients g of g.names: each parameter's three device copies, their
// versions and host values, and the table of adam_multi_f32. A target keeps
// the plan of its last step with each gradients' first address, so that
// the steps after the first look nothing up.
type adamPlan struct {
	params, m, v *Params
	names        []string
	grads, bf16  []DevicePtr
	bufs         [][3]*deviceParam
	vers         [][3]*version
	data         [][3][]float32
	table        DevicePtr
	most         int
}

// sameBF16 reports whether the parameters' bfloat16 copies are those the
// plan's table writes (a program may have made some since).
func (p *adamPlan) sameBF16() bool {
	for i, b := range p.bufs {
		if b[0].bf16 != p.bf16[i] {
			return false
		}
	}
	return true
}

// adamPlan is the plan of a step, kept or made.
func (t *deviceTarget) adamPlan(params, m, v *Params, g gradSet) (*adamPlan, error) {
	names := g.names
	key := g.dev[0]
	if p, ok := t.plans[key]; ok && p.params == params && p.m == m && p.v == v && slices.Equal(p.names, names) &&
		slices.Equal(p.grads, g.dev) && p.sameBF16() {
		return p, nil
	}
	if err := checkAdam(params, m, v, g); err != nil {
		return nil, err
	}
	p := &adamPlan{params: params, m: m, v: v, names: slices.Clone(names), grads: slices.Clone(g.dev)}
	words := t.entries(len(names))
	for i, name := range names {
		var bufs [3]*deviceParam
		var vers [3]*version
		var data [3][]float32
		for j, store := range []*Params{params, m, v} {
			b, err := t.param(store, name)
			if err != nil {
				return nil, err
			}
			bufs[j], vers[j] = b, store.versions[name]
			data[j], _ = store.values[name].Data().([]float32)
		}
		p.bufs, p.vers, p.data = append(p.bufs, bufs), append(p.vers, vers), append(p.data, data)
		e := words[i*entryWords:]
		e[entryP], e[entryG], e[entryM], e[entryV] = uint64(bufs[0].p), uint64(g.dev[i]), uint64(bufs[1].p), uint64(bufs[2].p)
		e[entryN], e[entryBF16] = uint64(g.sizes[i]), uint64(bufs[0].bf16)
		if decays(len(params.Shape(name))) {
			e[entryDecay] = 1
		}
		p.most = max(p.most, g.sizes[i])
		p.bf16 = append(p.bf16, bufs[0].bf16)
	}
	var err error
	if p.table, err = t.table(words); err != nil {
		return nil, err
	}
	if t.plans == nil {
		t.plans = map[DevicePtr]*adamPlan{}
	}
	t.plans[key] = p
	return p, nil
}

// adamConsts copies the step's constants, {β1, β2, ε, step, rc2, scale,
// keep}, to the target's memory for them, which adam_multi_f32 reads.
func (t *deviceTarget) adamConsts(s AdamStep) error {
	if t.k == 0 {
		p, err := t.b.Alloc(4 * 8)
		if err != nil {
			return errors.Wrap(err, "Adam's constants on the device")
		}
		t.k = p
	}
	c := s.consts()
	k := []float32{float32(s.Beta1), float32(s.Beta2), float32(s.Eps), float32(c.step), float32(c.rc2), float32(s.Scale), float32(c.keep)}
	return errors.Wrap(t.b.ToDevice(t.k, asBytes(k)), "Adam's constants to the device")
}

// sumSquares sums the squares of each gradient into sqThreads partials
// (sum_squares_multi_f32), then all the partials in one block (sum_f32):
// fixed launches, so the same gradients give the same bits.
func (t *deviceTarget) sumSquares(g gradSet) (float64, error) {
	if len(g.dev) == 0 {
		return 0, nil
	}
	if err := checkTensors(len(g.dev)); err != nil {
		return 0, err
	}
	words := t.entries(len(g.dev))
	for i, p := range g.dev {
		words[i*entryWords+entryG], words[i*entryWords+entryN] = uint64(p), uint64(g.sizes[i])
	}
	table, err := t.table(words)
	if err != nil {
		return 0, err
	}
	parts := len(g.dev) * sqThreads
	scratch, err := t.grow(&t.scratch, 0, 4*(parts+1))
	if err != nil {
		return 0, err
	}
	t.launch = sumSquaresMulti.Grid(Dim3{X: sqBlocks, Y: len(g.dev)}, Dim3{X: sqBlock}).Ptr(scratch).Ptr(table)
	if err := t.b.Launch(&t.launch); err != nil {
		return 0, err
	}
	sum := scratch.Add(4 * parts)
	t.launch = sumF32.Rows(1, parts).Ptr(sum).Ptr(scratch).Int(parts)
	if err := t.b.Launch(&t.launch); err != nil {
		return 0, err
	}
	one := []float32{0}
	err = t.b.ToHost(asBytes(one), sum)
	return float64(one[0]), errors.Wrap(err, "copying the sum of squares to the host")
}

// refreshBF16 rounds the parameters ps whose bfloat16 copies are older than
// their device values, or that have none yet, into those copies, in one
// launch (to_bf16_multi).
func (t *deviceTarget) refreshBF16(ps []*deviceParam) error {
	var stale []*deviceParam
	for _, b := range ps {
		if b.bf16 == 0 {
			q, err := t.b.Alloc(2 * max(b.n, 1))
			if err != nil {
				return errors.Wrapf(err, "the bfloat16 copy of %s", b.name)
			}
			b.bf16 = q
		}
		if !b.bf16Loaded || b.bf16Ver != b.ver {
			stale = append(stale, b)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	words := t.entries(len(stale))
	most := 0
	for i, b := range stale {
		e := words[i*entryWords:]
		e[entryP], e[entryN], e[entryBF16] = uint64(b.p), uint64(b.n), uint64(b.bf16)
		most = max(most, b.n)
	}
	table, err := t.table(words)
	if err != nil {
		return err
	}
	if err := t.launchTable(toBF16Multi, table, len(stale), most, func(l Launch) Launch { return l }); err != nil {
		return errors.Wrap(err, "the parameters' bfloat16 copies")
	}
	for _, b := range stale {
		b.bf16Ver, b.bf16Loaded = b.ver, true
	}
	return nil
}

// deviceSums are GradSums on a device: one buffer, the sums one after
// another in the order of their names.
type deviceSums struct {
	t   *deviceTarget
	g   gradSet
	at  map[string]int
	buf DevicePtr
	n   int
}

func (t *deviceTarget) newSums(params *Params, names []string) (sums, error) {
	s := &deviceSums{t: t, g: gradSet{names: names}, at: map[string]int{}}
	offs := make([]int, len(names))
	for i, name := range names {
		offs[i], s.at[name] = s.n, i
		s.g.sizes = append(s.g.sizes, params.Shape(name).TotalSize())
		s.n += s.g.sizes[i]
	}
	var err error
	if s.buf, err = t.b.Alloc(4 * max(s.n, 1)); err != nil {
		return nil, err
	}
	for _, off := range offs {
		s.g.dev = append(s.g.dev, s.buf.Add(4*off))
	}
	return s, s.zero()
}

func (s *deviceSums) zero() error {
	s.t.launch = fillF32.Elems(s.n).Ptr(s.buf).F32(0).Int(s.n)
	return s.t.b.Launch(&s.t.launch)
}

func (s *deviceSums) add(g gradSet, scale float64) error {
	if len(g.dev) == 0 {
		return nil
	}
	words := s.t.entries(len(g.dev))
	most := 0
	for i, name := range g.names {
		j, ok := s.at[name]
		if !ok {
			return errors.Errorf("no sum of %s", name)
		}
		e := words[i*entryWords:]
		e[entryP], e[entryG], e[entryN] = uint64(s.g.dev[j]), uint64(g.dev[i]), uint64(g.sizes[i])
		most = max(most, g.sizes[i])
	}
	table, err := s.t.table(words)
	if err != nil {
		return err
	}
	return s.t.launchTable(axpyMultiF32, table, len(g.dev), most, func(l Launch) Launch { return l.F32(float32(scale)) })
}

func (s *deviceSums) gradSet() gradSet { return s.g }

func (s *deviceSums) appendHost(buf any) (any, error) {
	b, ok := buf.([]float32)
	if !ok && buf != nil {
		return buf, errors.Errorf("a %T for sums of float32", buf)
	}
	k := len(b)
	b = append(b, make([]float32, s.n)...)
	return b, s.t.b.ToHost(asBytes(b[k:]), s.buf)
}

func (s *deviceSums) setHost(buf any) error {
	b, ok := buf.([]float32)
	if !ok || len(b) < s.n {
		return errors.Errorf("%T of %d values for %d sums of float32", buf, lenOf(buf), s.n)
	}
	return s.t.b.ToDevice(s.buf, asBytes(b[:s.n]))
}

func (s *deviceSums) close() error {
	if s.buf == 0 || s.t.b == nil {
		return nil
	}
	err := s.t.b.Free(s.buf)
	s.buf = 0
	return err
}
