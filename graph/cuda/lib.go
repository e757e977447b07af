package cuda

import (
	"strings"

	"github.com/ebitengine/purego"
	"github.com/pkg/errors"
)

// library is a shared library opened at run time.
type library struct {
	name   string // the name or path it was opened by
	handle uintptr
}

// openLibrary opens the first of candidates that dlopen finds (a bare name
// is looked up as dlopen does: LD_LIBRARY_PATH, the ld.so cache, the default
// folders). what names the library in the error, which lists every
// candidate tried and why it failed.
func openLibrary(what string, candidates []string) (*library, error) {
	var tried []string
	for _, c := range candidates {
		h, err := purego.Dlopen(c, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return &library{name: c, handle: h}, nil
		}
		tried = append(tried, c+" ("+err.Error()+")")
	}
	return nil, errors.Errorf("cannot load %s: tried %s", what, strings.Join(tried, "; "))
}

// bind sets each *func in fns to the library's function of that name; it
// fails, naming the library and the symbol, on the first that is missing.
func (l *library) bind(fns map[string]any) error {
	for name, fn := range fns {
		sym, err := purego.Dlsym(l.handle, name)
		if err != nil {
			return errors.Errorf("%s has no function %s (not the library expected, or too old)", l.name, name)
		}
		purego.RegisterFunc(fn, sym)
	}
	return nil
}

// close closes the library.
func (l *library) close() error {
	return errors.Wrapf(purego.Dlclose(l.handle), "closing %s", l.name)
}
