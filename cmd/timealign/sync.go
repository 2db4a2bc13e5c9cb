package main

import "errors"

// runSync is a placeholder until its issue lands.
func runSync(e *env, args []string) error {
	fs := newFlags(e, "sync", "[flags] [input.csv]", "Not available yet.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return errors.New("sync: not implemented yet")
}
