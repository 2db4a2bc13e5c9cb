package main

import "errors"

// runPLL is a placeholder until its issue lands.
func runPLL(e *env, args []string) error {
	fs := newFlags(e, "pll", "[flags] [input.csv]", "Not available yet.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return errors.New("pll: not implemented yet")
}
