// Package hostile holds the hostile-input suite: its test builds the
// project's commands and runs a table of bad inputs and mistaken commands
// against them, as a careless or hostile user would (TestHostileInputs,
// and TestHostileRuns for training runs). For each it checks
// the exit status, the error's text (and that nothing panicked), that no
// file of the runs beside it changed (hashes before and after), and that
// the command stayed within a bounded address space (ulimit -v). Run it
// with
//
//	go test ./internal/hostile
//
// It needs bash and a Unix system, and is skipped with -short.
package hostile
