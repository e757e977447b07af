//go:build !amd64

package vadam
