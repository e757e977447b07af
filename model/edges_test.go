package model

import (
	"strings"
	"testing"
)

// TestUnregisteredVariantIsNamedBeforeItsOptions: a config naming a
// variant of one's own, with its options, built without its registry, is
// refused for the name, not for the options.
func TestUnregisteredVariantIsNamedBeforeItsOptions(t *testing.T) {
	cfg, err := Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	cfg.FFN, cfg.Options = "nobias", map[string]float64{"gain": 2}
	_, err = FromConfig(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown ffn "nobias"`) || strings.Contains(err.Error(), "remove") ||
		!strings.Contains(err.Error(), "WithRegistry") {
		t.Fatalf("an unregistered ffn with options: %v, want an error naming the ffn and the registry", err)
	}
}
