// Package cliflag holds what the commands' flags share: flags whose -1
// means "not given", shown in the help without a "(default -1)", and a
// test that a command's -h exits with status 0.
package cliflag

import (
	"flag"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Unset is the value of a flag of Float or Int that was not given.
const Unset = -1

// Float defines a float64 flag that is Unset (-1) unless given; the usage
// says what that means, and the help shows no "(default -1)".
func Float(fs *flag.FlagSet, p *float64, name, usage string) {
	*p = Unset
	fs.Var(optional[float64]{p, strconv.ParseFloat}, name, usage)
}

// Int defines an int flag that is Unset (-1) unless given, as Float.
func Int(fs *flag.FlagSet, p *int, name, usage string) {
	*p = Unset
	fs.Var(optional[int]{p, func(s string, _ int) (int, error) { return strconv.Atoi(s) }}, name, usage)
}

// optional is a flag.Value whose String is empty while it is Unset, which
// the flag package takes for a zero default and does not print.
type optional[T int | float64] struct {
	p     *T
	parse func(string, int) (T, error)
}

func (o optional[T]) String() string {
	if o.p == nil || *o.p == Unset {
		return ""
	}
	return strconv.FormatFloat(float64(*o.p), 'g', -1, 64)
}

func (o optional[T]) Set(s string) error {
	v, err := o.parse(s, 64)
	if err != nil {
		return err.(*strconv.NumError).Err
	}
	*o.p = v
	return nil
}

// helpEnv, set in a test's child process, makes HelpExitsZero run main.
const helpEnv = "CLIFLAG_HELP_TEST"

// HelpExitsZero checks that main, given -h, prints a usage naming the
// flag want and exits with status 0. It runs the test binary again with
// main in place of the test named test, which must be the caller.
func HelpExitsZero(t *testing.T, test string, main func(), want string) {
	t.Helper()
	if os.Getenv(helpEnv) == "1" {
		os.Args = []string{os.Args[0], "-h"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), helpEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("-h: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "-"+want) || strings.Contains(string(out), "(default -1)") {
		t.Errorf("-h printed no usage of -%s, or a default of -1:\n%s", want, out)
	}
}

// FloatPtr defines a float64 flag that leaves *p nil unless given, and
// then points it to the value given: a given 0 is not a flag left out.
func FloatPtr(fs *flag.FlagSet, p **float64, name, usage string) {
	fs.Var(pointer[float64]{p, strconv.ParseFloat}, name, usage)
}

// IntPtr defines an int flag that leaves *p nil unless given, as FloatPtr.
func IntPtr(fs *flag.FlagSet, p **int, name, usage string) {
	fs.Var(pointer[int]{p, func(s string, _ int) (int, error) { return strconv.Atoi(s) }}, name, usage)
}

// pointer is a flag.Value that sets a pointer to the value given; its
// String is empty while the pointer is nil, which the help does not print.
type pointer[T int | float64] struct {
	p     **T
	parse func(string, int) (T, error)
}

func (o pointer[T]) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(float64(**o.p), 'g', -1, 64)
}

func (o pointer[T]) Set(s string) error {
	v, err := o.parse(s, 64)
	if err != nil {
		return err.(*strconv.NumError).Err
	}
	*o.p = &v
	return nil
}
