package main

import "errors"

// runDemo is a placeholder until the foundation lands.
func runDemo(e *env, args []string) error {
	fs := newFlags(e, "demo", "[flags]", "Not available yet.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return errors.New("demo: not implemented yet")
}
