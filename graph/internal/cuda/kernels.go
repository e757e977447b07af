package cuda

import (
	"embed"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/pkg/errors"
)

//go:generate sh kernels/gen.sh kernels

// source holds the kernels' CUDA C (kernels/*.cu, *.cuh), the PTX nvcc makes
// of each .cu (kernels/gen.sh), and the host shim of the simulated device.
//
//go:embed kernels/*.cu kernels/*.cuh kernels/*.ptx kernels/sim.h
var source embed.FS

// kind is a kernel parameter's type as the Go side passes it.
type kind string

const (
	kindPtr   kind = "pointer (Ptr)"
	kindInt   kind = "int (int32)"
	kindFloat kind = "float (float32)"
	kindU64   kind = "unsigned long long (uint64)"
)

// param is one parameter of a kernel.
type param struct {
	name string
	kind kind
}

// kernelDecl matches a kernel's declaration up to its parameter list.
var kernelDecl = regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)

// parseKernels returns the parameters of each kernel declared in src, CUDA C
// whose kernels are declared `extern "C" __global__ void name(params)` with
// one or more parameters, each a pointer, int, float or unsigned long long.
func parseKernels(file, src string) (map[string][]param, error) {
	out := map[string][]param{}
	for _, m := range kernelDecl.FindAllStringSubmatch(src, -1) {
		if _, dup := out[m[1]]; dup {
			return nil, errors.Errorf("%s: kernel %s declared twice", file, m[1])
		}
		var ps []param
		for _, p := range strings.Split(m[2], ",") {
			q, err := parseParam(p)
			if err != nil {
				return nil, errors.Wrapf(err, "%s: kernel %s", file, m[1])
			}
			ps = append(ps, q)
		}
		out[m[1]] = ps
	}
	return out, nil
}

// parseParam parses one parameter such as "const float* x" or "int n".
func parseParam(p string) (param, error) {
	f := strings.Fields(strings.ReplaceAll(p, "*", " * "))
	if len(f) < 2 {
		return param{}, errors.Errorf("parameter %q has no type and name", strings.TrimSpace(p))
	}
	name, typ := f[len(f)-1], strings.Join(f[:len(f)-1], " ")
	switch {
	case strings.HasSuffix(typ, "*"):
		return param{name, kindPtr}, nil
	case typ == "int":
		return param{name, kindInt}, nil
	case typ == "float":
		return param{name, kindFloat}, nil
	case typ == "unsigned long long":
		return param{name, kindU64}, nil
	}
	return param{}, errors.Errorf("parameter %q: type %q is not a pointer, int, float or unsigned long long", name, typ)
}

// sharedKernels returns the kernels of src whose body declares __shared__
// memory: those the simulated device runs with a thread per CUDA thread
// and a barrier for __syncthreads (the others, as plain loops).
func sharedKernels(src string) map[string]bool {
	out := map[string]bool{}
	for _, m := range kernelDecl.FindAllStringSubmatchIndex(src, -1) {
		body, depth := src[m[1]:], 0
		for i, c := range body {
			if c == '{' {
				depth++
			} else if c == '}' {
				if depth--; depth == 0 {
					body = body[:i]
					break
				}
			}
		}
		out[src[m[2]:m[3]]] = strings.Contains(body, "__shared__")
	}
	return out
}

// kernels returns every kernel of the embedded source with its parameters,
// and the names of the .cu files, sorted.
func kernels() (map[string][]param, []string, error) {
	files, err := source.ReadDir("kernels")
	if err != nil {
		return nil, nil, errors.Wrap(err, "kernels")
	}
	all := map[string][]param{}
	var cu []string
	for _, f := range files {
		if path.Ext(f.Name()) != ".cu" {
			continue
		}
		cu = append(cu, f.Name())
		src, err := source.ReadFile("kernels/" + f.Name())
		if err != nil {
			return nil, nil, errors.Wrap(err, "kernels")
		}
		ks, err := parseKernels(f.Name(), string(src))
		if err != nil {
			return nil, nil, err
		}
		for name, ps := range ks {
			if _, dup := all[name]; dup {
				return nil, nil, errors.Errorf("%s: kernel %s declared in another file too", f.Name(), name)
			}
			all[name] = ps
		}
	}
	sort.Strings(cu)
	return all, cu, nil
}
