// Package cliflag holds what the commands' flags share: flags whose -1
// means "not given", shown in the help without a "(default -1)", parsing
// that answers -h with a one-line summary and a bad flag with that flag's
// help alone, and a test that a command's -h exits with status 0.
package cliflag

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/pkg/errors"
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
// flag want and exits with status 0: a line "Usage: NAME …", then after a
// blank line what the command does, not the flag package's "Usage of
// NAME:". It runs the test binary again with main in place of the test
// named test, which must be the caller.
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
	lines := strings.Split(string(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "Usage: ") || lines[1] != "" || len(strings.Fields(lines[2])) < 3 {
		t.Errorf("-h does not start with a line of usage and, after a blank line, what the command does:\n%s", out)
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

// Parse parses args into fs, the flags of a command that usage shows
// ("train [flags]") and summary says in one line what it does. -h prints
// "Usage: " usage, the summary and every flag's help to stdout and returns
// flag.ErrHelp; a bad flag returns the error with that flag's help alone
// (an unknown one with a hint of -h), never the whole usage.
func Parse(fs *flag.FlagSet, args []string, usage, summary string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "Usage: %s\n\n%s\n\nFlags:\n", usage, summary)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return err
	}
	if help := flagHelp(fs, err.Error()); help != "" {
		return errors.Errorf("%v\n%s", err, strings.TrimRight(help, "\n"))
	}
	return errors.Errorf("%v (%s -h lists every flag)", err, fs.Name())
}

// flagHelp is the help of the flag of fs that the parse error msg names
// ("… -name: …" or "… -name"), as -h prints it; "" if it names none.
func flagHelp(fs *flag.FlagSet, msg string) string {
	var named *flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if (strings.Contains(msg, "-"+f.Name+":") || strings.HasSuffix(msg, "-"+f.Name)) && (named == nil || len(f.Name) > len(named.Name)) {
			named = f
		}
	})
	if named == nil {
		return ""
	}
	one := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	one.Var(named.Value, named.Name, named.Usage)
	one.Lookup(named.Name).DefValue = named.DefValue
	var b strings.Builder
	one.SetOutput(&b)
	one.PrintDefaults()
	return b.String()
}
