package sysmem

import (
	"runtime"
	"testing"
)

func TestFindKB(t *testing.T) {
	tests := []struct {
		text string
		want int64
		ok   bool
	}{
		{"MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n", 20000000 << 10, true},
		{"MemTotal:       24000000 kB\n", 0, false},
		{"MemAvailable: lots kB\n", 0, false},
		{"MemAvailable: -5 kB\n", 0, false},
		{"MemAvailable: 5 MB\n", 0, false},
	}
	for _, tt := range tests {
		got, ok := findKB([]byte(tt.text), "MemAvailable:")
		if got != tt.want || ok != tt.ok {
			t.Errorf("findKB(%q) = %d, %v; want %d, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAvailableOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MemAvailable is Linux's")
	}
	n, ok := Available()
	if !ok || n <= 0 {
		t.Fatalf("Available() = %d, %v on Linux", n, ok)
	}
	if n, ok := PeakRSS(); !ok || n <= 0 {
		t.Fatalf("PeakRSS() = %d, %v on Linux", n, ok)
	}
}
