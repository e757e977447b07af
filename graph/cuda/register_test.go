package cuda

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/transformer-go/transformer/graph"
)

// TestRegisterRefusesTooManyParams checks that a module whose kernel takes
// more parameters than a launch passes is refused at registration, naming
// the module, the kernel and the limit: a launch of it would pass Check's
// count and then read past the launch's arguments.
func TestRegisterRefusesTooManyParams(t *testing.T) {
	params := make([]string, graph.MaxLaunchArgs+1)
	for i := range params {
		params[i] = fmt.Sprintf("int a%d", i)
	}
	src := fmt.Sprintf("extern \"C\" __global__ void wide(%s) {}\n", strings.Join(params, ", "))
	fsys := fstest.MapFS{
		"k/wide.cu":  {Data: []byte(src)},
		"k/wide.ptx": {Data: []byte("// PTX\n")},
	}
	_, err := graph.RegisterDeviceModule("example.com/too-many-params", fsys, "k")
	t.Log(err)
	contains(t, err, "example.com/too-many-params", "kernel wide", fmt.Sprint(graph.MaxLaunchArgs))
}
