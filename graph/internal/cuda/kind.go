package cuda

import (
	"strings"

	"github.com/pkg/errors"
)

// Kind is where a program runs, as -device names it: cpu, cuda or auto.
type Kind int

// The kinds of device. KindAuto is CUDA when Open succeeds, else the CPU.
const (
	KindCPU Kind = iota
	KindCUDA
	KindAuto
)

var kindNames = [...]string{KindCPU: "cpu", KindCUDA: "cuda", KindAuto: "auto"}

// String is the kind's name.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "Kind(?)"
	}
	return kindNames[k]
}

// ParseKind parses cpu, cuda or auto.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, errors.Errorf("device %q: want one of %s", s, strings.Join(kindNames[:], ", "))
}

// Set implements flag.Value.
func (k *Kind) Set(s string) error {
	v, err := ParseKind(s)
	if err == nil {
		*k = v
	}
	return err
}

// Choose opens the device k names with open (Open, in a program): nil for
// KindCPU; for KindCUDA the device or open's error; for KindAuto the device if open
// succeeds, else nil and the reason in fallback, for the caller to log.
func Choose(k Kind, open func() (*CUDA, error)) (dev *CUDA, fallback, err error) {
	switch k {
	case KindCPU:
		return nil, nil, nil
	case KindCUDA:
		dev, err = open()
		return dev, nil, err
	case KindAuto:
		dev, err = open()
		if err != nil {
			return nil, errors.Wrap(err, "device auto: running on the CPU"), nil
		}
		return dev, nil, nil
	}
	return nil, nil, errors.Errorf("device: unknown kind %d", int(k))
}
