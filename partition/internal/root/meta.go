package root

import (
	"fmt"

	"github.com/zkelect/zkelect/internal/termtext"
)

// This file checks what a member publishes about itself besides its
// claims (Record.Address, Record.Labels): routers, dashboards and
// operators' terminals show it. A member validates its own before it
// publishes (partition.Config), and a reader drops another's that does not
// pass (DecodeRecordWithin): the record's claims still count, the address
// or labels are read as absent.

const (
	// MaxAddress bounds a member's address, in bytes.
	MaxAddress = 1024
	// MaxLabels bounds how many labels a member publishes.
	MaxLabels = 32
	// MaxLabelKey bounds a label's key, in bytes.
	MaxLabelKey = 64
	// MaxLabelValue bounds a label's value, in bytes.
	MaxLabelValue = 256
)

// ValidateAddress returns an error naming the rule when addr is over
// MaxAddress bytes, is not UTF-8 or holds a control or format character
// (ESC, newline, tab, DEL, C1 controls, bidirectional overrides, line
// separators: what would act on a terminal or forge a line; termtext.Check).
func ValidateAddress(addr string) error {
	if len(addr) > MaxAddress {
		return fmt.Errorf("is %d bytes long, want at most %d", len(addr), MaxAddress)
	}
	return checkShown(addr)
}

// ValidateLabels returns an error naming the label and the rule when
// labels are more than MaxLabels, a key is empty or over MaxLabelKey
// bytes, a value is over MaxLabelValue bytes, or either is not UTF-8 or
// holds a control or format character.
func ValidateLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("has %d labels, want at most %d", len(labels), MaxLabels)
	}
	for k, v := range labels {
		switch {
		case k == "":
			return fmt.Errorf("has an empty key")
		case len(k) > MaxLabelKey:
			return fmt.Errorf("has a key of %d bytes, want at most %d", len(k), MaxLabelKey)
		case len(v) > MaxLabelValue:
			return fmt.Errorf("has a value of %d bytes for %q, want at most %d", len(v), k, MaxLabelValue)
		}
		if err := checkShown(k); err != nil {
			return fmt.Errorf("has a key that %w", err)
		}
		if err := checkShown(v); err != nil {
			return fmt.Errorf("has a value for %q that %w", k, err)
		}
	}
	return nil
}

// checkShown fails when s would act on a terminal instead of being shown:
// not UTF-8, or a control, format or line-separator character
// (termtext.Check, the rule the CLI escapes by).
func checkShown(s string) error { return termtext.Check(s) }

// dropBadMeta clears r's address or labels when they fail validation.
func (r *Record) dropBadMeta() {
	if ValidateAddress(r.Address) != nil {
		r.Address = ""
	}
	if ValidateLabels(r.Labels) != nil {
		r.Labels = nil
	}
}
