package graph

// Programs keeps compiled programs by key (a batch shape such as
// "train/32x24x24") and compiles a missing one on first use: batches are
// bucketed by length so that only a few shapes are ever built. Every program
// shares the same parameter tensors.
type Programs struct {
	progs map[string]*Program
}

// NewPrograms returns an empty cache.
func NewPrograms() *Programs { return &Programs{progs: map[string]*Program{}} }

// Get returns the program for key, calling build to make it on first use.
func (ps *Programs) Get(key string, build func() (*Program, error)) (*Program, error) {
	if p, ok := ps.progs[key]; ok {
		return p, nil
	}
	p, err := build()
	if err != nil {
		return nil, err
	}
	ps.progs[key] = p
	return p, nil
}

// Len is the number of programs built so far.
func (ps *Programs) Len() int { return len(ps.progs) }

// Close releases every program.
func (ps *Programs) Close() error {
	var first error
	for k, p := range ps.progs {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
		delete(ps.progs, k)
	}
	return first
}
