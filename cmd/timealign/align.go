package main

import "errors"

// runAlign is a placeholder until its issue lands.
func runAlign(e *env, args []string) error {
	fs := newFlags(e, "align", "[flags] [input.csv]", "Not available yet.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return errors.New("align: not implemented yet")
}
