// The go.mod that notebooks/setup.sh puts in place of gophernotes v0.7.5's own
// when it builds the kernel: it copies gophernotes' source from the module
// cache, applies x_package.patch and builds it against these versions (the
// ones gophernotes v0.7.5 pins do not compile on Go 1.26; newer x/tools ignore
// GODEBUG=gotypesalias=0, which gomacro needs). This folder holds no Go code.

module github.com/gopherdata/gophernotes

go 1.26

require (
	github.com/cosmos72/gomacro v0.0.0-20240506194242-2ff796e3da10
	github.com/go-zeromq/zmq4 v0.14.1
	github.com/gofrs/uuid v4.2.0+incompatible
)

require (
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	github.com/mattn/go-runewidth v0.0.15 // indirect
	github.com/peterh/liner v1.2.2 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	golang.org/x/mod v0.32.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.40.0 // indirect
	golang.org/x/tools v0.41.0 // indirect
)
