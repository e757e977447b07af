package graph

// OwnMemory makes every op of p write, from its next run, a tensor of its
// own (on) or its slot in the planned arena (off).
func OwnMemory(p *Program, on bool) { p.ownMemory(on) }

// BlindPlan lays p out, from its next run, as if Gorgonia's ops always wrote
// fresh memory (see blindPlan).
func BlindPlan(p *Program) error {
	l, err := blindPlan(p.g, p)
	p.ownMemory(false)
	p.layout = l
	return err
}
