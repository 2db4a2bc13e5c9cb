package main

import "errors"

// runSimulate is a placeholder until the foundation lands.
func runSimulate(e *env, args []string) error {
	fs := newFlags(e, "simulate", "[flags]", "Not available yet.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return errors.New("simulate: not implemented yet")
}
