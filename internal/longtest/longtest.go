// Package longtest says whether the tests run their long cross-checks in
// full: cmd/bench's timing beside PyTorch in both precisions over several
// rounds, and cmd/train's many rounds of killing and resuming a run. By default
// they run a smaller set, so that no package's tests come near go test's
// 10-minute limit on a busy 2-core machine; Env=1, which .ci/run sets,
// runs them whole (docs/testing.md).
package longtest

import "os"

// Env is the environment variable that asks for the full set.
const Env = "TRANSFORMER_LONG_TESTS"

// Full reports whether the long cross-checks run in full: Env is "1".
func Full() bool { return os.Getenv(Env) == "1" }
