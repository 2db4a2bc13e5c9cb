package main

import "errors"

// runEstimate is a placeholder until its issue lands.
func runEstimate(e *env, args []string) error {
	fs := newFlags(e, "estimate", "[flags] [input.csv]", "Not available yet.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return errors.New("estimate: not implemented yet")
}
