package graph

import (
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CopyRows sets the float input named input of dst to rows of the output
// named output of src (of one runtime if either runs on a device), over
// their first axis: row r of the input becomes row rows[r] of the output
// (nil rows: the output as it is, of as many rows). Their other axes must
// agree. src may be dst.
//
// The output is src's from its last run, and must still be readable: on
// the CPU, where all programs of a runtime share one arena, only until the
// next run of any program of the runtime (see Program.Run); it is refused
// after that on a device too, although each program there keeps its
// values in memory of its own until it runs again. On the CPU it copies
// host memory; on a device the copy stays on the device (gather_rows_f32),
// and the input keeps it until the host sets the input again (Set): no
// value crosses between host and device, but for the row indices.
func CopyRows(dst *Program, input string, src *Program, output string, rows []int) error {
	in, out, err := copyRowsNodes(dst, input, src, output)
	if err != nil {
		return err
	}
	size, err := rowSize(in.Shape(), out.Shape(), rows)
	if err != nil {
		return errors.Wrapf(err, "copying rows of output %s into input %s", output, input)
	}
	return errors.Wrapf(dst.exec.copyRows(in, src, output, rows, size), "copying rows of output %s into input %s", output, input)
}

// copyRowsNodes are CopyRows' input and output nodes, checked.
func copyRowsNodes(dst *Program, input string, src *Program, output string) (in, out *G.Node, err error) {
	in, ok := dst.inputs[input]
	o, has := src.outputs[output]
	switch {
	case !ok:
		return nil, nil, errors.Errorf("copying rows: the program has no input %s", input)
	case !has:
		return nil, nil, errors.Errorf("copying rows: the program has no output %s", output)
	case dst.rt != src.rt && (dst.rt.device != DeviceCPU || src.rt.device != DeviceCPU):
		return nil, nil, errors.Errorf("copying rows of output %s into input %s: the programs run on different runtimes, one on a device", output, input)
	case !src.ran:
		return nil, nil, errors.Errorf("copying rows of output %s: it is not readable (the program has not run since it or another program of its runtime last did)", output)
	case o.n == in:
		return nil, nil, errors.Errorf("copying rows of output %s into input %s: they are one value", output, input)
	case in.Dtype() != o.n.Dtype() || in.Dtype() != tensor.Float32 && in.Dtype() != tensor.Float64:
		return nil, nil, errors.Errorf("copying rows of output %s (%v) into input %s (%v): want the same floats", output, o.n.Dtype(), input, in.Dtype())
	}
	return in, o.n, nil
}

// rowSize is the elements in a row of in and out, shapes that agree but
// for their first axis: in's rows taking out's rows in the order rows.
func rowSize(in, out tensor.Shape, rows []int) (int, error) {
	if len(in) == 0 || len(out) != len(in) || !slices.Equal(in[1:], out[1:]) {
		return 0, errors.Errorf("shapes %v and %v differ beyond their first axis", out, in)
	}
	if rows == nil && in[0] != out[0] {
		return 0, errors.Errorf("%d rows into %d", out[0], in[0])
	}
	if rows != nil && len(rows) != in[0] {
		return 0, errors.Errorf("%d row indices for %d rows", len(rows), in[0])
	}
	for r, from := range rows {
		if from < 0 || from >= out[0] {
			return 0, errors.Errorf("row %d from row %d, outside the output's %d rows", r, from, out[0])
		}
	}
	return in.TotalSize() / max(in[0], 1), nil
}

// gather writes into dst the rows of src, each of size elements: row r of
// dst is row rows[r] (nil: row r).
func gather[T any](dst, src []T, size int, rows []int) {
	if rows == nil {
		copy(dst, src)
		return
	}
	for r, from := range rows {
		copy(dst[r*size:(r+1)*size], src[from*size:(from+1)*size])
	}
}

// copyRows is CopyRows on the host: in's values take the rows of src's
// output.
func (x *hostExec) copyRows(in *G.Node, src *Program, output string, rows []int, size int) error {
	to := in.Value().(*tensor.Dense)
	from, _ := src.value(output).(*tensor.Dense)
	switch d := to.Data().(type) {
	case []float32:
		gather(d, from.Data().([]float32), size, rows)
	case []float64:
		gather(d, from.Data().([]float64), size, rows)
	}
	return nil
}

// copyRows is CopyRows on the device: in's device value takes the rows of
// src's output (gather_rows_f32), and the host's copy of in no longer goes
// to the device.
func (x *deviceExec) copyRows(in *G.Node, src *Program, output string, rows []int, size int) error {
	from, ok := src.exec.(*deviceExec)
	if !ok {
		return errors.New("the output's program does not run on the device")
	}
	out := src.outputs[output].n
	var idx DevicePtr
	if rows != nil {
		if err := x.rowIndices(rows); err != nil {
			return err
		}
		idx = x.rows
	}
	n := in.Shape()[0]
	x.call.launch = gatherRowsF32.Elems(n * size).Ptr(x.loc[in]).Ptr(from.loc[out]).Ptr(idx).Int(n).Int(size)
	if err := x.b.Launch(&x.call.launch); err != nil {
		return err
	}
	for _, u := range x.inputs {
		if u.n == in {
			u.set = false
		}
	}
	return nil
}

// rowIndices copies rows to the program's buffer of CopyRows' row indices,
// made once, as long as the longest first axis of its inputs.
func (x *deviceExec) rowIndices(rows []int) error {
	if x.rows == 0 {
		n := 1
		for _, u := range x.inputs {
			if sh := u.n.Shape(); len(sh) > 0 {
				n = max(n, sh[0])
			}
		}
		p, err := x.alloc(4 * n)
		if err != nil {
			return err
		}
		x.rows, x.rowsHost = p, make([]int32, n)
	}
	idx := x.rowsHost[:len(rows)]
	for i, r := range rows {
		idx[i] = int32(r)
	}
	return x.b.ToDevice(x.rows, asBytes(idx))
}
